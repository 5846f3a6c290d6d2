// What `server start` (managed.ts, in the caller's process) and `server supervise` (supervisor.ts,
// a detached process of its own) say to each other: the request in an environment variable, one
// JSON report line back. Fixed: servers started by an older oc-exec are still found and stopped.
import type { SandboxSpec } from "../../plan/sandbox-spec.js";
import type { SshSpec } from "../../plan/ssh-spec.js";

export type StartRequest = {
  binary: string;
  version: string | null;
  dir: string;
  idleTimeoutMs: number;
  port: number;
  env: NodeJS.ProcessEnv;
  startTimeoutMs: number;
  /** The sandbox the server and every tool it starts run in, or null; the models its turns use. */
  sandbox: SandboxSpec | null;
  models: (string | null)[];
  /** For --warm: what turns fit this server (hosts/warm/warm-key.ts); absent for `server start`. */
  warmKey?: string;
  /** A process whose end ends the server (a batch's own server: the batch), however it ends. */
  ownerPid?: number;
  /** The host the server runs on (server start --ssh); `binary` and `dir` are then paths there. */
  ssh?: SshSpec;
};

/** How long a server gets to stop after SIGTERM before it is killed. */
export const STOP_GRACE_MS = 3_000;

export type SuperviseConfig = Omit<StartRequest, "env" | "startTimeoutMs"> & {
  id: string;
  password: string;
  startTimeoutMs: number;
};

export const SUPERVISE_ENV = "OC_EXEC_SUPERVISE";

/** The supervisor's one report to `server start`, a JSON line on its stdout. */
export type SupervisorReport = { ready: string } | { failed: string; timedOut: boolean } | { unsupported: string };

export function readReport(line: string): SupervisorReport | null {
  try {
    const value = JSON.parse(line) as SupervisorReport;
    return value !== null && typeof value === "object" ? value : null;
  } catch {
    return null;
  }
}
