// The one way oc-exec finds the local opencode it runs and learns what it is: located (--opencode,
// OC_EXEC_OPENCODE, the bundled dependency, PATH) and detected (version, features), once per run
// for each binary however many hosts, servers or commands ask. Every caller (the process and warm
// hosts, batch and server start, doctor, --version) reads the same answer and the same problem.
import { readEnvironment } from "../../kernel/environment.js";
import type { LaunchProblem, Warning } from "../../kernel/problem.js";
import { majorOf, TESTED_RANGE } from "./features.js";
import { type Located, locateOpencode } from "./locate.js";
import { type Detected, detectOpencode } from "./version.js";

export type Opencode = { binary: Located; detected: Detected };

const ensured = new Map<string, Promise<Opencode>>();

/**
 * `asked` is the path the caller was given (--opencode, a library option); null or undefined falls
 * back to OC_EXEC_OPENCODE and then the bundled binary and PATH. `signal` gives up asking the binary
 * for its version (the turn stopped first); an answer cut short is not kept for later callers.
 */
export async function ensureOpencode(
  asked: string | null | undefined,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<Opencode | { problem: LaunchProblem; path: string | null }> {
  const located = locateOpencode(asked ?? readEnvironment(env).opencode, env.PATH);
  if (!located.ok) return { problem: { name: "OpencodeNotFound", message: located.message }, path: located.path };
  const key = located.binary.path;
  let found = ensured.get(key);
  if (!found) {
    found = detectOpencode(located.binary, env, undefined, signal).then((detected) => ({
      binary: located.binary,
      detected,
    }));
    ensured.set(key, found);
  }
  const opencode = await found;
  if (signal?.aborted) ensured.delete(key);
  return opencode;
}

/** The warning a turn carries when the local binary is not a release oc-exec was tested with. */
export function untestedWarning(detected: Detected): Warning | null {
  if (detected.tested) return null;
  const { version } = detected;
  return {
    code: "untested_opencode",
    message:
      majorOf(version) === 2
        ? `opencode ${version} is a 2.x release: oc-exec reads its output from 2.x's source and shaped fixtures, but no 2.x binary has been recorded (tested: ${TESTED_RANGE}); its output may differ`
        : `opencode ${version ?? "of unknown version"} is not a release oc-exec was tested with (${TESTED_RANGE}); its output may differ`,
  };
}
