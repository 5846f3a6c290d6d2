// `oc-exec server start`, run from its plan: opencode found and checked once (this machine's), then
// the server started behind its supervisor (hosts/server/managed.ts). Its record, or why not.
import { ensureOpencode } from "../domain/opencode/ensure.js";
import { type ServerStartProblem, startServer } from "../hosts/server/managed.js";
import type { ManagedServer } from "../hosts/server/registry.js";
import type { ServerPlan } from "../plan/server-plan.js";

/** How long opencode gets to start serving. */
const START_TIMEOUT_MS = 60_000;

export async function startPlannedServer(
  plan: ServerPlan,
  env: NodeJS.ProcessEnv,
): Promise<ManagedServer | ServerStartProblem> {
  const common = { idleTimeoutMs: plan.idleTimeoutMs, env, startTimeoutMs: START_TIMEOUT_MS };
  // On another host, the binary there says what it is when it starts.
  if (plan.where === "ssh")
    return startServer({
      ...common,
      binary: plan.opencode,
      version: null,
      dir: plan.ssh.dir ?? "~",
      port: 0,
      sandbox: null,
      models: [],
      ssh: plan.ssh,
    });
  const found = await ensureOpencode(plan.opencode, env);
  if ("problem" in found)
    return { problem: { kind: "config", name: found.problem.name, message: found.problem.message } };
  return startServer({
    ...common,
    binary: found.binary.path,
    version: found.detected.version,
    dir: plan.dir,
    port: plan.port,
    sandbox: plan.sandbox,
    models: plan.models,
  });
}
