// Chooses and makes the backend for a run, once: a running server when the caller names one
// (--attach), else `opencode run`, in a sandbox when the caller asked for one. Callers (the
// library's runTurn, the CLI, a batch, a conversation) make it before their first turn, hand the
// same value to every turn, and close it when the run ends.
import { readOpencodeConfigs } from "../domain/opencode/config-sources.js";
import type { OptionLabels } from "../domain/outcome/labels.js";
import { API_LABELS } from "../domain/outcome/labels.js";
import type { Backend } from "../engine/backend.js";
import { DEFAULTS } from "../plan/options.js";
import type { ResolvedTurn } from "../plan/resolve-options.js";
import { makeAcpBackend } from "./acp/acp-backend.js";
import { makeProcessBackend } from "./process/process-backend.js";
import { openSandbox } from "./sandbox/sandbox.js";
import { makeServerBackend } from "./server/server-backend.js";
import { makeSshBackend } from "./ssh/ssh-backend.js";
import { makeWarmBackend } from "./warm/warm-backend.js";

/** From the resolved options: the server (attach), else the binary (opencode), the environment. */
export type BackendSpec = Pick<ResolvedTurn, "attach" | "opencode" | "env"> &
  Partial<
    Pick<
      ResolvedTurn,
      | "sandbox"
      | "ssh"
      | "startupTimeoutMs"
      | "dir"
      | "model"
      | "fallbackModel"
      | "config"
      | "opencodeConfig"
      | "acp"
      | "warm"
      | "warmIdleMs"
      | "pure"
    >
  > & {
    labels: Pick<OptionLabels, "attach" | "config"> & Partial<Pick<OptionLabels, "pure" | "ssh" | "acp">>;
  };

/** `startup`: aborted when the turn stops before the backend is ready (TurnControl.startup). */
export async function makeBackend(spec: BackendSpec, startup?: AbortSignal): Promise<Backend> {
  if (spec.warm && spec.attach === null)
    return makeWarmBackend(
      {
        opencode: spec.opencode,
        env: spec.env,
        dir: spec.dir ?? process.cwd(),
        config: spec.config ?? [],
        opencodeConfig: spec.opencodeConfig ?? { content: spec.env.OPENCODE_CONFIG_CONTENT },
        pure: spec.pure ?? false,
        ssh: spec.ssh ?? null,
        sandbox: spec.sandbox ?? null,
        model: spec.model ?? null,
        fallbackModel: spec.fallbackModel ?? null,
        warmIdleMs: spec.warmIdleMs ?? DEFAULTS.warmIdleMs,
        labels: { ...API_LABELS, ...spec.labels },
      },
      () => makeBackend({ ...spec, warm: false }),
    );
  if (spec.acp)
    return makeAcpBackend({
      acp: spec.acp,
      opencode: spec.opencode,
      env: spec.env,
      label: spec.labels.acp ?? "acp",
      signal: startup,
    });
  if (spec.attach !== null) return makeServerBackend({ attach: spec.attach, label: spec.labels.attach, env: spec.env });
  if (spec.ssh)
    return makeSshBackend({
      ssh: spec.ssh,
      opencode: spec.opencode,
      env: spec.env,
      connectTimeoutMs: spec.startupTimeoutMs ?? null,
    });
  if (!spec.sandbox)
    return makeProcessBackend({ opencode: spec.opencode, env: spec.env, sandbox: null, signal: startup });
  const dir = spec.dir ?? process.cwd();
  // Bad inherited content: the turn reports it when it opens; the hosts come from the files.
  const content = spec.opencodeConfig && "content" in spec.opencodeConfig ? spec.opencodeConfig.content : undefined;
  const opened = await openSandbox(spec.sandbox, {
    workspace: dir,
    env: spec.env,
    // The fallback model's provider too: a turn may end on it (--fallback-model).
    models: [spec.model ?? null, ...(spec.fallbackModel ? [spec.fallbackModel] : [])],
    configs: readOpencodeConfigs(spec.env, dir, content),
  });
  const backend = await makeProcessBackend({
    signal: startup,
    opencode: spec.opencode,
    env: spec.env,
    sandbox: "sandbox" in opened ? opened.sandbox : null,
  });
  // Fails closed: a sandbox that cannot be set up stops every turn before opencode starts.
  return "problem" in opened ? { ...backend, problem: backend.problem ?? opened.problem } : backend;
}

/** Ends what a backend holds for the run; a backend that failed to be made holds nothing. */
export async function closeBackend(backend: Backend | Promise<Backend>): Promise<void> {
  let made: Backend;
  try {
    made = await backend;
  } catch {
    return;
  }
  await made.close?.();
}
