// Everything before opencode starts: find and identify the binary, write run.started, check the
// workspace, files and output paths, read the prompt, and build the invocation. Returns the
// invocation, or the problem that stops the turn before it starts.
import { statSync } from "node:fs";
import { dirname } from "node:path";
import { mergeConfigContent } from "../opencode/config-content.js";
import { majorOf, TESTED_RANGE } from "../opencode/features.js";
import { buildInvocation, type Invocation, titleFor, unsupportedFlags } from "../opencode/invocation.js";
import { locateOpencode } from "../opencode/locate.js";
import { buildPolicy, invalidInheritedPolicy, type Policy } from "../opencode/permissions.js";
import { detectOpencode } from "../opencode/version.js";
import { ConfigError } from "../outcome/errors.js";
import type { ResolvedTurn } from "./resolve-options.js";
import { schemaInstruction } from "./structured-output.js";
import type { TurnCore } from "./turn-core.js";

export type LaunchProblem = { name: string; message: string };
export type Prepared = { invocation: Invocation; problem: null } | { invocation: null; problem: LaunchProblem };

const problem = (name: string, message: string): Prepared => ({ invocation: null, problem: { name, message } });

/** Why a path cannot be used as a directory, or null when it can. */
export function notADirectory(path: string): string | null {
  try {
    return statSync(path).isDirectory() ? null : "is not a directory";
  } catch {
    return "does not exist";
  }
}

function notAFile(path: string): string | null {
  try {
    return statSync(path).isFile() ? null : "is not a file";
  } catch {
    return "does not exist";
  }
}

export async function prepareTurn(options: ResolvedTurn, core: TurnCore): Promise<Prepared> {
  const { labels, env } = options;
  const located = locateOpencode(options.opencode, env.PATH);
  const detected = located.ok ? await detectOpencode(located.binary, env) : null;
  const version = detected?.version ?? null;
  core.started({
    opencode: { path: located.ok ? located.binary.path : located.path, version },
    cwd: options.dir,
    model: options.model,
    agent: options.agent,
    resume: options.session,
  });
  const dirProblem = notADirectory(options.dir);
  if (dirProblem) return problem("WorkspaceError", `${labels.dir} ${options.dir} ${dirProblem}`);
  if (!located.ok || !detected) return problem("OpencodeNotFound", located.ok ? "" : located.message);
  if (!detected.tested) {
    core.normalizer.warning(
      "untested_opencode",
      (majorOf(version) ?? 0) >= 2
        ? `opencode ${version} is a 2.x release: oc-exec reads its output from 2.x's source and shaped fixtures, but no 2.x binary has been recorded (tested: ${TESTED_RANGE}); its output may differ`
        : `opencode ${version ?? "of unknown version"} is not a release oc-exec was tested with (${TESTED_RANGE}); its output may differ`,
    );
  }
  const missing = unsupportedFlags(options, detected.features);
  if (missing.length > 0)
    return problem("UnsupportedFlag", `opencode ${version} does not support ${missing.join(", ")}`);
  const pathsProblem = turnPathProblem(options);
  if (pathsProblem) return { invocation: null, problem: pathsProblem };
  try {
    const input = await readTurnInput(options, core);
    const invocation = buildInvocation({
      ...options,
      binary: located.binary.path,
      workspace: options.dir,
      prompt: input.prompt,
      title: input.title,
      permission: input.policy,
      configContent: mergeConfigContent(env.OPENCODE_CONFIG_CONTENT, options.config, labels.config),
      baseEnv: env,
      features: detected.features,
    });
    return { invocation, problem: null };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return problem(error.name, error.message);
  }
}

/** The files to attach and the last-message file's directory, checked before the turn starts. */
export function turnPathProblem(options: ResolvedTurn): LaunchProblem | null {
  const { labels } = options;
  for (const file of options.files) {
    const fileProblem = notAFile(file);
    if (fileProblem) return { name: "FileNotFound", message: `${labels.files} ${file} ${fileProblem}` };
  }
  if (options.outputLastMessage) {
    const dirOfOutput = dirname(options.outputLastMessage);
    const outputProblem = notADirectory(dirOfOutput);
    if (outputProblem) {
      return {
        name: "OutputPathError",
        message: `${labels.outputLastMessage} ${options.outputLastMessage}: the directory ${dirOfOutput} ${outputProblem}`,
      };
    }
  }
  return null;
}

export type TurnInput = {
  /** What opencode is sent: the prompt, with the output schema's instruction when there is one. */
  prompt: string;
  title: string | null;
  /** --allow/--deny as a permission config, or null when neither was given. */
  policy: Policy["value"] | null;
};

/** Reads the prompt and builds the permission policy; a ConfigError says what the caller must fix. */
export async function readTurnInput(options: ResolvedTurn, core: TurnCore): Promise<TurnInput> {
  const read = await options.prompt();
  for (const w of read.warnings) core.normalizer.warning(w.code, w.message);
  if (read.text.trim() === "") throw new ConfigError("the prompt is empty", "UsageError");
  const policy = buildPolicy(options.allow, options.deny, options.labels);
  if (!policy) {
    const invalid = invalidInheritedPolicy(options.env.OPENCODE_PERMISSION);
    if (invalid) throw new ConfigError(invalid, "PermissionConfigError");
  }
  for (const w of policy?.warnings ?? []) core.normalizer.warning(w.code, w.message);
  return {
    prompt: options.outputSchema ? `${read.text}${schemaInstruction(options.outputSchema)}` : read.text,
    title: options.title ?? (options.outputSchema ? titleFor(read.text) : null),
    policy: policy?.value ?? null,
  };
}
