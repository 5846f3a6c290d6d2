// Chooses and makes the backend for a run, once: a running server when the caller names one
// (--attach), else `opencode run`, in a sandbox when the caller asked for one. Callers (the
// library's runTurn, the CLI, a batch, a conversation) make it before their first turn, hand the
// same value to every turn, and close it when the run ends.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { readOpencodeConfigs } from "../domain/opencode/config-sources.js";
import type { Backend } from "../engine/backend.js";
import type { AcpSandboxNeeds } from "../plan/acp-spec.js";
import type { Placement } from "../plan/placement.js";
import { type AcpBackend, type AcpBackendSpec, makeAcpBackend } from "./acp/acp-backend.js";
import { makeProcessBackend } from "./process/process-backend.js";
import { agentNeeds } from "./sandbox/providers.js";
import { openSandbox } from "./sandbox/sandbox.js";
import { makeServerBackend } from "./server/server-backend.js";
import { makeSshBackend } from "./ssh/ssh-backend.js";
import { warmAgentLink } from "./warm/warm-agent.js";
import { makeWarmBackend } from "./warm/warm-backend.js";

/**
 * Made from the placement alone (where the turn runs), never from a turn: a batch or a conversation
 * makes one backend before its first turn. `startup`: aborted when the turn stops before the backend
 * is ready (TurnControl.startup).
 */
export async function makeBackend(placement: Placement, startup?: AbortSignal): Promise<Backend> {
  if (placement.acp) return makeAcpHost({ ...placement, acp: placement.acp }, startup);
  if (placement.warm && placement.attach === null)
    return makeWarmBackend(placement, () => makeBackend({ ...placement, warm: false }));
  if (placement.attach !== null)
    return makeServerBackend({ attach: placement.attach, label: placement.names.attach, env: placement.env });
  if (placement.ssh)
    return makeSshBackend({
      ssh: placement.ssh,
      opencode: placement.opencode,
      env: placement.env,
      connectTimeoutMs: placement.startupTimeout?.ms ?? null,
    });
  if (!placement.sandbox)
    return makeProcessBackend({ opencode: placement.opencode, env: placement.env, sandbox: null, signal: startup });
  const opened = await openPlacementSandbox(placement, placement.sandbox);
  const backend = await makeProcessBackend({
    signal: startup,
    opencode: placement.opencode,
    env: placement.env,
    sandbox: "sandbox" in opened ? opened.sandbox : null,
  });
  // Fails closed: a sandbox that cannot be set up stops every turn before opencode starts.
  return "problem" in opened ? { ...backend, problem: backend.problem ?? opened.problem } : backend;
}

/**
 * The ACP host of a placement that names an agent. The agent runs in the sandbox as `opencode run`
 * does, and every command it runs with it; a sandbox that cannot be set up starts no agent (the
 * problem stops every turn).
 */
export async function makeAcpHost(
  placement: Placement & { acp: NonNullable<Placement["acp"]> },
  startup?: AbortSignal,
): Promise<AcpBackend> {
  const sandbox = placement.sandbox
    ? placement.acp.sandbox
      ? await openAgentSandbox(placement, placement.sandbox, placement.acp.sandbox)
      : await openPlacementSandbox(placement, placement.sandbox)
    : null;
  return makeAcpBackend({ ...placement, sandbox, signal: startup, warmAgent: warmAgentOf(placement) });
}

/** --warm with an agent: where its warm agent is found or started, or why the turn starts its own. */
function warmAgentOf(placement: Placement & { acp: NonNullable<Placement["acp"]> }): AcpBackendSpec["warmAgent"] {
  if (!placement.warm) return null;
  // A sandbox's HOME, where the agent keeps its state, is the run's own and gone with it.
  if (placement.sandbox) return { cold: "a sandboxed agent's HOME is the run's own, gone with it" };
  if (placement.ssh) return { cold: `${placement.names.ssh} runs the agent on another host` };
  const request = { env: placement.env, idleTimeoutMs: placement.warmIdleMs, name: placement.acp.name };
  return { connect: (launch) => warmAgentLink({ ...request, launch }) };
}

/** The run's sandbox, with the providers of opencode's configuration and the run's models let through. */
function openPlacementSandbox(placement: Placement, spec: NonNullable<Placement["sandbox"]>) {
  const dir = placement.dir;
  // Bad inherited content: the turn reports it when it opens; the hosts come from the files.
  const content = "content" in placement.opencodeConfig ? placement.opencodeConfig.content : undefined;
  return openSandbox(spec, {
    workspace: dir,
    env: placement.env,
    // The fallback model's provider too: a turn may end on it (--fallback-model).
    models: [placement.models.model, ...(placement.models.fallback ? [placement.models.fallback] : [])],
    configs: readOpencodeConfigs(placement.env, dir, content),
  });
}

/**
 * The run's sandbox for an ACP agent other than opencode: its provider's hosts and keys
 * (plan/acp-spec.ts's table) through the proxy, its other variables passed in, its configuration
 * files shown read-only; HOME, where its state directory is, is the sandbox's throwaway one.
 */
function openAgentSandbox(placement: Placement, spec: NonNullable<Placement["sandbox"]>, agent: AcpSandboxNeeds) {
  const home = placement.env.HOME || homedir();
  const config = agent.config.map((path) => join(home, path)).filter((path) => existsSync(path));
  return openSandbox(
    { ...spec, readable: [...spec.readable, ...config], passEnv: [...spec.passEnv, ...agent.baseUrls, ...agent.env] },
    {
      workspace: placement.dir,
      env: placement.env,
      models: [],
      configs: [],
      agent: agentNeeds(agent, placement.env, `${placement.names.acp} ${placement.acp!.name}`),
      protect: agent.workspace,
    },
  );
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
