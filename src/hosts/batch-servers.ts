// A batch's servers, made once before its first task: the caller's (--attach) for every task, or
// one started per distinct sandbox policy and host of its tasks (most batches: one), each stopped
// when the batch ends and, through ownerPid, when the batch dies.
import { ensureOpencode } from "../domain/opencode/ensure.js";
import type { Backend } from "../engine/backend.js";
import type { Placement } from "../plan/placement.js";
import type { ResolvedTurn } from "../plan/resolve-options.js";
import type { SandboxSpec } from "../plan/sandbox-spec.js";
import type { SshSpec } from "../plan/ssh-spec.js";
import { makeBackend } from "./make-backend.js";
import { type ServerStartProblem, startServer, stopServer } from "./server/managed.js";
import type { ManagedServer } from "./server/registry.js";

/** Tasks that share one server: one sandbox policy, one host and directory there. */
export type ServerGroup<T> = {
  sandbox: SandboxSpec | null;
  ssh: SshSpec | null;
  models: (string | null)[];
  tasks: T[];
};

export type BatchServers<T> = {
  /** Each task's backend; `first`, the one a batch's own checks use. */
  backendOf: Map<T, Backend>;
  first: Backend | null;
  stop(): Promise<void>;
};

/**
 * Why the batch cannot have its servers: `config` (no binary to start one with, a workspace a server must not serve: exit 5 as a usage error), `start` (a server
 * did not start), `unusable` (a server that cannot run the batch's tasks, e.g. without its sandbox).
 */
export type BatchServersProblem = { problem: { kind: "config" | "start" | "unusable"; message: string } };

export async function makeBatchServers<T>(
  spec: {
    /** The server every task runs on (--attach), or null to start the batch's own. */
    attach: string | null;
    /** The binary asked for (--opencode): here, else OC_EXEC_OPENCODE and the usual search; on a host, else `opencode`. */
    opencode: string | null;
    /** The batch's plan (its defaults resolved as a turn): what its own servers are made from. */
    checked: ResolvedTurn;
    groups: ServerGroup<T>[];
  },
  env: NodeJS.ProcessEnv,
): Promise<BatchServers<T> | BatchServersProblem> {
  const servers: ManagedServer[] = [];
  const stop = async () => {
    for (const started of servers) await stopServer(env, started);
  };
  const backendOf = new Map<T, Backend>();
  let first: Backend | null = null;
  for (const group of spec.groups) {
    let url = spec.attach;
    if (url === null) {
      const started = await startBatchServer(spec.opencode, spec.checked.placement, group);
      if ("problem" in started) {
        await stop();
        return started;
      }
      servers.push(started);
      url = started.url;
    }
    const made = await makeBackend({ ...spec.checked.placement, attach: url, acp: null, warm: false });
    // A server that cannot give the batch's sandbox (--attach) runs none of its tasks.
    const problem = made.problem ?? (spec.attach !== null ? made.check(spec.checked).problem : null);
    if (problem) {
      await stop();
      return { problem: { kind: "unusable", message: `${problem.name}: ${problem.message}` } };
    }
    first ??= made;
    for (const task of group.tasks) backendOf.set(task, made);
  }
  return { backendOf, first, stop };
}

/** The batch's own server. It stops it itself; the idle time only guards against a batch that died. */
async function startBatchServer(
  opencode: string | null,
  placement: Placement,
  group: Pick<ServerGroup<unknown>, "sandbox" | "ssh" | "models">,
): Promise<ManagedServer | BatchServersProblem> {
  const common = {
    idleTimeoutMs: 10 * 60_000,
    port: 0,
    env: placement.env,
    startTimeoutMs: 60_000,
    // Stopped with the batch, even if the batch is killed outright.
    ownerPid: process.pid,
  };
  const started = group.ssh
    ? await startServer({
        ...common,
        binary: opencode ?? "opencode",
        version: null,
        dir: group.ssh.dir ?? "~",
        sandbox: null,
        models: [],
        ssh: group.ssh,
      })
    : await startLocal();
  if (!("problem" in started)) return started;
  // startServer's refusals before a server starts are configuration errors; the rest, a start that failed.
  return {
    problem: { kind: started.problem.kind === "config" ? "config" : "start", message: started.problem.message },
  };

  async function startLocal(): Promise<ManagedServer | ServerStartProblem | BatchServersProblem> {
    const found = await ensureOpencode(opencode, placement.env);
    if ("problem" in found) return { problem: { kind: "config", message: found.problem.message } };
    const { binary, detected } = found;
    return startServer({
      ...common,
      binary: binary.path,
      version: detected.version,
      dir: placement.dir,
      sandbox: group.sandbox,
      models: group.models,
    });
  }
}
