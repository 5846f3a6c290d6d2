// The `opencode run` backend: one process per turn. Made once per run: the binary is located and
// its version and flags learned once, however many turns follow. Each turn gets its invocation
// (argv, environment, stdin) and its session operations (`opencode export`, `session delete`).

import { rmSync } from "node:fs";
import { splitterOptions } from "../../domain/events/split-options.js";
import { ensureOpencode, untestedWarning } from "../../domain/opencode/ensure.js";
import { sharedServiceProblem } from "../../domain/opencode/features.js";
import { buildInvocation, unsupportedFlags } from "../../domain/opencode/invocation.js";
import { opencodeStateProblem } from "../../domain/opencode/state-dirs.js";
import type { Backend } from "../../engine/backend.js";
import type { LaunchProblem, Warning } from "../../kernel/problem.js";
import { DEFAULTS } from "../../plan/options.js";
import { runFields } from "../../plan/run-fields.js";
import { ownTempDir } from "../../sys/own-temp.js";
import { type Launch, newCommandId, type Sandbox } from "../sandbox/sandbox.js";
import { processSource } from "./process-source.js";
import { deleteSession, exportSession, listAgents } from "./session-commands.js";

export type ProcessBackendSpec = {
  /** An explicitly chosen binary, else null: bundled, then PATH. */
  opencode: string | null;
  env: NodeJS.ProcessEnv;
  /** Every opencode process of the run (the turn, export, delete) runs in it. */
  sandbox: Sandbox | null;
  /** Gives up asking the binary for its version (the turn stopped first). */
  signal?: AbortSignal;
};

export async function makeProcessBackend(spec: ProcessBackendSpec): Promise<Backend> {
  const found = await ensureOpencode(spec.opencode, spec.env, spec.signal);
  const ok = "binary" in found ? found : null;
  const detected = ok?.detected ?? null;
  const version = detected?.version ?? null;
  const shared = detected ? sharedServiceProblem(version, detected.features) : null;
  const problem: LaunchProblem | null =
    "problem" in found ? found.problem : shared ? { name: "UnsupportedRelease", message: shared } : null;
  // 2.x's side commands (export, session delete, agent list) would reach its shared background
  // service: none runs; the turn's own `run --standalone` is the only opencode started.
  const standalone = detected?.features.standalone ?? false;
  const untested = detected ? untestedWarning(detected) : null;
  const warnings: Warning[] = [...(untested ? [untested] : []), ...(spec.sandbox?.warnings ?? [])];
  const { sandbox } = spec;
  // opencode's runtime writes a 5.5 MB copy of a native library into TMPDIR at every start and never
  // removes it (upstream: anomalyco/opencode#21427): without a sandbox (which has a TMPDIR of its
  // own), opencode and its tools get one for the run, made at the first turn and removed at close.
  let tmp: string | null = null;
  const agents = new Map<string, ReturnType<typeof listAgents>>();
  const ownTmp = (env: NodeJS.ProcessEnv) => {
    tmp ??= ownTempDir("opencode", env.TMPDIR || undefined);
    return tmp;
  };
  return {
    opencode: { path: "problem" in found ? found.path : found.binary.path, version },
    ...(sandbox
      ? {
          sandbox: sandbox.info,
          close: () => sandbox.close(),
          wrapCommand: (command: Launch) => sandbox.wrap(command, newCommandId()),
        }
      : {
          close: async () => {
            if (tmp) rmSync(tmp, { recursive: true, force: true });
          },
        }),
    problem,
    check(plan) {
      const missing = [
        ...(detected ? unsupportedFlags(runFields(plan), detected.features) : []),
        ...(standalone && plan.session.ephemeral
          ? ["--ephemeral (its session delete would reach the shared service)"]
          : []),
      ];
      // In a sandbox opencode's state is the sandbox's own (private-state.ts): nothing to check here.
      const unwritable = sandbox ? null : opencodeStateProblem(plan.placement.env);
      return {
        warnings,
        problem:
          missing.length > 0
            ? { name: "UnsupportedFlag", message: `opencode ${version} does not support ${missing.join(", ")}` }
            : unwritable
              ? { name: "StateNotWritable", message: unwritable }
              : null,
      };
    },
    async open(plan, input) {
      if (!ok || !detected) return { problem: problem! };
      if ("problem" in plan.placement.opencodeConfig) return { problem: plan.placement.opencodeConfig.problem };
      const invocation = buildInvocation({
        ...runFields(plan),
        binary: ok.binary.path,
        workspace: plan.placement.dir,
        prompt: input.prompt,
        title: input.title,
        permission: input.policy,
        configContent: plan.placement.opencodeConfig.content,
        baseEnv: sandbox ? plan.placement.env : { ...plan.placement.env, TMPDIR: ownTmp(plan.placement.env) },
        features: detected.features,
      });
      // One id per turn: the proxy's refusals are kept under it.
      const id = newCommandId();
      const ctx = {
        binary: invocation.file,
        env: invocation.env,
        cwd: invocation.cwd,
        timeoutMs: DEFAULTS.sessionCommandTimeoutMs,
        launch: sandbox ? (command: Launch) => sandbox.wrap(command, id) : null,
      };
      // A mistyped --agent made opencode fall back to its default agent, which may write files, with
      // only a warning: checked before the turn, once per workspace and configuration of the run.
      if (plan.turn.agent !== null && !standalone) {
        const key = `${invocation.cwd}\0${plan.placement.opencodeConfig.content ?? ""}`;
        const known = agents.get(key) ?? listAgents(ctx);
        agents.set(key, known);
        const listed = await known;
        if ("names" in listed && !listed.names.includes(plan.turn.agent.name))
          return {
            problem: {
              name: "UnknownAgent",
              message: `${plan.turn.agent.option} ${plan.turn.agent.name}: opencode knows no such agent here (it knows ${listed.names.join(", ")}); it would have run the default agent instead; nothing was run`,
            },
          };
      }
      const launched = sandbox ? { ...invocation, ...(await sandbox.wrap(invocation, id)) } : invocation;
      return {
        ...(sandbox ? { refused: () => sandbox.refused(id) } : {}),
        source: processSource(launched, {
          killAfterMs: plan.turn.killAfterMs,
          split: splitterOptions(plan.turn.maxLineBytes, plan.turn.maxOutputBytes),
        }),
        ops: {
          export: standalone ? null : (id) => exportSession(ctx, id),
          delete: (id) => deleteSession(ctx, id),
          sessionId: null,
        },
      };
    },
  };
}
