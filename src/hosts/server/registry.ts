// The servers `oc-exec server start` started, one JSON file each under the user's state directory
// ($XDG_STATE_HOME/oc-exec/servers, else ~/.local/state/oc-exec/servers), readable by the user
// only: each holds the server's generated password, so that `--attach URL` finds it without the
// script handling secrets. A file is written when its server is up and removed when it stops.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ocExecStateDir } from "../../kernel/state-dir.js";
import type { SandboxSpec } from "../../plan/sandbox-spec.js";
import { isAlive } from "../../sys/pids.js";
import { type WriteProblem, writeFileSafely } from "../../sys/safe-write.js";
import type { SandboxCheck } from "../sandbox/policy.js";
import type { SandboxInfo } from "../sandbox/sandbox.js";

export type ManagedServer = {
  id: string;
  url: string;
  /** The opencode server's pid, and the oc-exec supervisor's that watches its idle time. */
  pid: number;
  supervisor_pid: number;
  dir: string;
  started_at: string;
  /** The server stops after this long with no turn and no request; 0 = never. */
  idle_timeout_ms: number;
  opencode: { path: string; version: string | null };
  username: string;
  password: string;
  /**
   * The sandbox the server and its tools run in (server start --sandbox): as asked, and as set up;
   * project_config false when it was started with OPENCODE_DISABLE_PROJECT_CONFIG (no workspace code loads).
   */
  sandbox?: { spec: SandboxSpec; info: SandboxInfo; check?: SandboxCheck; project_config?: false };
  /**
   * On another host (server start --ssh): `dir` and `opencode.path` are there, `url` is the local
   * forward. How to reach it for a --verify check there: its ssh options and config file, --pass-env,
   * and the supervisor's master connection (absent in records of older releases).
   */
  ssh?: {
    destination: string;
    options?: string[];
    config_file?: string | null;
    pass_env?: string[];
    control_path?: string;
  };
  /** Started by --warm for the turns that fit it (hosts/warm/warm-key.ts); absent for `server start`'s. */
  warm_key?: string;
  /**
   * A warm ACP agent (--warm --acp), not an opencode server: `url` is its broker's Unix socket
   * (`unix:PATH`), `pid` the agent's, `supervisor_pid` the broker's (hosts/warm/acp-broker.ts).
   */
  acp?: { name: string };
};

export function registryDir(env: NodeJS.ProcessEnv): string {
  return join(ocExecStateDir(env), "servers");
}

/** Writes a server's record, whole and readable by the user only; a problem when it could not be. */
export function writeServer(env: NodeJS.ProcessEnv, server: ManagedServer): WriteProblem | undefined {
  const dir = registryDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return writeFileSafely(join(dir, `${server.id}.json`), `${JSON.stringify(server, null, 2)}\n`, { mode: 0o600 });
}

/** The connections a sandboxed server's proxy refused, one host:port per line, as its supervisor writes them. */
export function refusedFile(env: NodeJS.ProcessEnv, id: string): string {
  return join(registryDir(env), `${id}.refused`);
}

/** Removes a server's record, its log, its refusals, its leases and a warm agent's socket. */
export function removeServer(env: NodeJS.ProcessEnv, id: string): void {
  for (const ext of ["json", "log", "refused", "sock"]) rmSync(join(registryDir(env), `${id}.${ext}`), { force: true });
  rmSync(join(registryDir(env), `${id}.leases`), { recursive: true, force: true });
}

/**
 * A turn running on a managed server, held by the oc-exec process that runs it. The server's
 * supervisor aborts the session of a lease whose process is gone (killed outright: no code of its
 * own ran to stop the turn), so a dead oc-exec's turn does not go on spending its budget.
 */
export type Lease = { pid: number; session: string; directory: string };

/** Writes a lease for a turn on this server; the returned function removes it when the turn ends. */
export function takeLease(env: NodeJS.ProcessEnv, id: string, lease: Lease): () => void {
  const dir = join(registryDir(env), `${id}.leases`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${lease.pid}-${lease.session}.json`);
  writeFileSync(file, JSON.stringify(lease), { mode: 0o600 });
  return () => rmSync(file, { force: true });
}

/** The leases on a server, each with the function that removes it. */
export function readLeases(env: NodeJS.ProcessEnv, id: string): (Lease & { release(): void })[] {
  const dir = join(registryDir(env), `${id}.leases`);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const file = join(dir, name);
    try {
      const lease = JSON.parse(readFileSync(file, "utf8")) as Lease;
      return typeof lease.pid === "number" && typeof lease.session === "string"
        ? [{ ...lease, release: () => rmSync(file, { force: true }) }]
        : [];
    } catch {
      return [];
    }
  });
}

export function readServers(env: NodeJS.ProcessEnv): ManagedServer[] {
  const dir = registryDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  const servers: ManagedServer[] = [];
  for (const name of names) {
    try {
      const value = JSON.parse(readFileSync(join(dir, name), "utf8")) as ManagedServer;
      if (typeof value.url === "string" && typeof value.pid === "number") servers.push(value);
    } catch {
      // A file being written, or damaged: not a server we can talk to.
    }
  }
  return servers.sort((a, b) => a.started_at.localeCompare(b.started_at));
}

/**
 * The managed server at this URL (compared without credentials and trailing slash), if any: the
 * newest one alive when a server was restarted on the same port and a dead one left its record.
 */
export function findServer(env: NodeJS.ProcessEnv, url: string): ManagedServer | null {
  const key = url.replace(/\/$/, "");
  const matches = readServers(env).filter((s) => s.url.replace(/\/$/, "") === key);
  return [...matches].reverse().find((s) => isAlive(s.pid)) ?? matches.at(-1) ?? null;
}
