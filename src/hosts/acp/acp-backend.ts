// The ACP host (--acp AGENT): every turn starts the agent, speaks the Agent Client Protocol to it
// over its stdio, and ends it (acp-source.ts). Made once per run: the agent's command found (for
// `opencode`, the binary oc-exec already uses, with `acp`), nothing started until a turn opens.
// The engine is the one every host feeds: the agent's updates become the lines it reads.
import { rmSync } from "node:fs";
import { isAbsolute } from "node:path";
import { splitterOptions } from "../../domain/events/split-options.js";
import { ensureOpencode, untestedWarning } from "../../domain/opencode/ensure.js";
import { buildEnv } from "../../domain/opencode/invocation.js";
import { searchPath } from "../../domain/opencode/locate.js";
import type { Backend } from "../../engine/backend.js";
import type { LaunchProblem, Warning } from "../../kernel/problem.js";
import type { AcpSpec } from "../../plan/acp-spec.js";
import type { Placement } from "../../plan/placement.js";
import { ownTempDir } from "../../sys/own-temp.js";
import { acpSource } from "./acp-source.js";

/** `opencode`: with the built-in `opencode`, the binary asked for (--opencode), else the usual search. */
export type AcpBackendSpec = Pick<Placement, "opencode" | "env" | "names"> & { acp: AcpSpec; signal?: AbortSignal };

export async function makeAcpBackend(spec: AcpBackendSpec): Promise<Backend> {
  let argv = spec.acp.argv;
  let problem: LaunchProblem | null = null;
  let version: string | null = null;
  const warnings: Warning[] = [];
  if (argv === null) {
    const found = await ensureOpencode(spec.opencode, spec.env, spec.signal);
    if ("problem" in found) problem = found.problem;
    else {
      argv = [found.binary.path, "acp"];
      version = found.detected.version;
      const untested = untestedWarning(found.detected);
      if (untested) warnings.push(untested);
    }
  } else {
    const [command] = argv;
    const found = command!.includes("/") ? command! : searchPath(command!, spec.env.PATH);
    if (found === null)
      problem = {
        name: "AcpAgentNotFound",
        message: `${spec.names.acp} ${spec.acp.name}: ${command} is not on PATH; install the agent (its ACP command is ${argv.join(" ")}), or give its command line`,
      };
    else argv = [isAbsolute(found) ? found : command!, ...argv.slice(1)];
  }
  const shown = `${spec.names.acp} ${spec.acp.name}`;
  // The agent and its tools get a TMPDIR of the run's own, removed at close: opencode leaves a
  // 5.5 MB native library in TMPDIR at every start (as under `opencode run`, process-backend.ts).
  let tmp: string | null = null;
  const ownTmp = (env: NodeJS.ProcessEnv) => {
    tmp ??= ownTempDir("opencode", env.TMPDIR || undefined);
    return tmp;
  };
  const isOpencode = spec.acp.argv === null;
  return {
    opencode: { path: (argv ?? ["opencode", "acp"]).join(" "), version },
    problem,
    async close() {
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    },
    check(turn) {
      // What ACP has no way to say yet: the session to resume and the variant are opencode run's.
      const unsupported = [
        turn.session.id !== null || turn.session.continue ? `${turn.labels.session}/${turn.labels.continue}` : null,
        turn.session.fork ? turn.labels.fork : null,
        turn.variant !== null ? "--variant" : null,
        turn.files.length > 0 ? turn.labels.files : null,
        turn.session.ephemeral ? "--ephemeral" : null,
      ].filter((x): x is string => x !== null);
      return {
        warnings,
        problem:
          unsupported.length > 0
            ? {
                name: "UnsupportedFlag",
                message: `${shown} does not take ${unsupported.join(", ")} yet: each ACP turn is a new session in the workspace; nothing was run`,
              }
            : null,
      };
    },
    async open(turn, input) {
      if (problem || argv === null) return { problem: problem! };
      if (isOpencode && "problem" in turn.placement.opencodeConfig)
        return { problem: turn.placement.opencodeConfig.problem };
      // opencode reads the policy and the extra configuration from its environment, as under `run`.
      const env = isOpencode
        ? buildEnv(turn.placement.env, {
            permission: input.policy,
            configContent:
              "content" in turn.placement.opencodeConfig ? turn.placement.opencodeConfig.content : undefined,
          })
        : buildEnv(turn.placement.env);
      return {
        source: acpSource({
          file: argv[0]!,
          args: argv.slice(1),
          env: { ...env, PWD: turn.placement.dir, TMPDIR: ownTmp(turn.placement.env) },
          cwd: turn.placement.dir,
          prompt: input.prompt,
          model: turn.model,
          policy: input.policy,
          auto: turn.auto,
          killAfterMs: turn.killAfterMs,
          split: splitterOptions(turn.maxLineBytes, turn.maxOutputBytes).stderr,
          shown,
        }),
        // A session of its own per turn, in the agent's own store: nothing to export or delete here.
        ops: { export: null, delete: async () => true, sessionId: null },
      };
    },
  };
}
