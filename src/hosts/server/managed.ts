// Warm servers for scripts, the caller's side: `oc-exec server start` (and --warm, and a batch)
// launches a supervisor (this same program, `server supervise ID`, detached: supervisor.ts), which
// starts `opencode serve`, records it (registry.ts) and reports its URL back (supervise-protocol.ts);
// `server stop` signals the supervisor, which stops opencode and every tool process below it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { join } from "node:path";
import { majorOf } from "../../domain/opencode/features.js";
import { ownPackage } from "../../kernel/package-root.js";
import { withoutGuardMark } from "../../sys/orphan-guard.js";
import { isAlive } from "../../sys/pids.js";
import { signalProcess, stopProcessTree } from "../../sys/process-tree.js";
import { projectConfigDisabled, workspaceCodeProblem } from "../sandbox/workspace-code.js";
import { findServer, type ManagedServer, readServers, removeServer } from "./registry.js";
import {
  readReport,
  STOP_GRACE_MS,
  type StartRequest,
  SUPERVISE_ENV,
  type SuperviseConfig,
  type SupervisorReport,
} from "./supervise-protocol.js";

/**
 * This package's CLI, which runs a server's supervisor: found from this file, bundled or not, the
 * one way (from the library, process.argv[1] is the caller's script, not oc-exec).
 */
function ownCli(): string {
  const own = ownPackage();
  if (!own) throw new Error("oc-exec's package.json was not found above its own files");
  return join(own.dir, "bin", "oc-exec.js");
}

/**
 * Why a server did not start: `config`, refused before anything started (a port in use, a
 * workspace a sandboxed server must not serve, an opencode too old to serve: the caller's to fix);
 * `failed`, opencode did not come up; `timeout`, it did not answer in time.
 */
export type ServerStartProblem = { problem: { kind: "config" | "failed" | "timeout"; name: string; message: string } };

const startProblem = (kind: ServerStartProblem["problem"]["kind"], message: string, name = "ServerStartError") => ({
  problem: { kind, name, message },
});

/** Starts a server through a detached supervisor: its record, or why it did not start. */
export async function startServer(request: StartRequest): Promise<ManagedServer | ServerStartProblem> {
  // 2.x's server is another API (hosts/server/client.ts): refused before one starts.
  if ((majorOf(request.version) ?? 0) >= 2)
    return startProblem(
      "config",
      `opencode ${request.version}'s server is 2.x's API, which oc-exec's server backend does not speak (it speaks 1.x's, tested with 1.18.33): run turns without a server (oc-exec runs \`opencode run --standalone\` with a 2.x binary), or through ACP (--acp opencode)`,
      "UnsupportedRelease",
    );
  // opencode reports a taken port only as "Unexpected error ServeError" in its log: ask first.
  if (request.port !== 0 && (await portInUse(request.port)))
    return startProblem(
      "config",
      `port ${request.port} on 127.0.0.1 is in use by another program: choose another --port, or leave it out for a free one`,
      "ConfigError",
    );
  // Code the workspace makes opencode load would run inside the server, password and all.
  if (request.sandbox && !request.ssh && !projectConfigDisabled(request.env)) {
    const shipped = workspaceCodeProblem(
      request.dir,
      request.env,
      `--sandbox ${request.sandbox.mode} cannot serve ${request.dir}`,
    );
    if (shipped) return startProblem("config", shipped, "SandboxWorkspaceCode");
  }
  const id = randomBytes(6).toString("hex");
  const config: SuperviseConfig = {
    id,
    password: randomBytes(24).toString("base64url"),
    binary: request.binary,
    version: request.version,
    dir: request.dir,
    idleTimeoutMs: request.idleTimeoutMs,
    port: request.port,
    startTimeoutMs: request.startTimeoutMs,
    sandbox: request.sandbox,
    models: request.models,
    ...(request.warmKey ? { warmKey: request.warmKey } : {}),
    ...(request.ownerPid ? { ownerPid: request.ownerPid } : {}),
    ...(request.ssh ? { ssh: request.ssh } : {}),
  };
  // A remote server's directory is on its host.
  const said = await startDetached(
    ["server", "supervise", id],
    { ...request.env, [SUPERVISE_ENV]: JSON.stringify(config) },
    request.ssh ? process.cwd() : request.dir,
    "the supervisor",
  );
  const report: SupervisorReport =
    "failed" in said
      ? { failed: said.failed, timedOut: false }
      : (readReport(said.line) ?? { failed: `the supervisor said ${said.line}`, timedOut: false });
  if ("unsupported" in report) return startProblem("config", report.unsupported, "ConfigError");
  if ("failed" in report) return startProblem(report.timedOut ? "timeout" : "failed", report.failed);
  return (
    findServer(request.env, report.ready) ?? startProblem("failed", "the server started but its record is missing")
  );
}

/**
 * Starts this program (`oc-exec ARGS`) detached, for a process that outlives its starter on purpose
 * (a server's supervisor, a warm agent's broker: never the starter's mark), and waits for the one
 * line it reports on stdout; or says why none came (`what` names it), within `timeoutMs` if given.
 */
export function startDetached(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  what: string,
  timeoutMs?: number,
): Promise<{ line: string } | { failed: string }> {
  const child = spawn(process.execPath, [ownCli(), ...args], {
    detached: true,
    stdio: ["ignore", "pipe", "ignore"],
    env: withoutGuardMark(env),
    cwd,
  });
  return new Promise((resolve) => {
    let text = "";
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => done({ failed: `${what} did not report in time` }), timeoutMs);
    const done = (value: { line: string } | { failed: string }) => {
      clearTimeout(timer);
      child.stdout!.destroy();
      child.unref();
      resolve(value);
    };
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const end = text.indexOf("\n");
      if (end !== -1) done({ line: text.slice(0, end) });
    });
    child.once("exit", (code, signal) => done({ failed: `${what} exited (${signal ?? code}) before it reported` }));
    child.once("error", (error) => done({ failed: error.message }));
  });
}

/** Whether something already listens on this port of 127.0.0.1. */
function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "EADDRINUSE"));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(false)));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stops one managed server: through its supervisor, or directly when the supervisor is gone. */
export async function stopServer(env: NodeJS.ProcessEnv, server: ManagedServer): Promise<void> {
  const supervisor = server.supervisor_pid;
  const waitFor = async (alive: () => boolean) => {
    const deadline = Date.now() + STOP_GRACE_MS * 3;
    while (Date.now() < deadline && alive()) await sleep(50);
  };
  if (isAlive(supervisor)) {
    signalProcess(supervisor, "SIGTERM");
    await waitFor(() => isAlive(supervisor) || isAlive(server.pid));
  }
  if (isAlive(server.pid)) await stopProcessTree(server.pid, STOP_GRACE_MS);
  // The supervisor releases what the server held (its TMPDIR, the sandbox, the ssh master) once
  // opencode is gone; `server stop` returns after that, so nothing of the server is left behind it,
  // also on a slow machine where opencode took longer than the grace to end.
  await waitFor(() => isAlive(supervisor));
  if (isAlive(supervisor)) signalProcess(supervisor, "SIGKILL");
  removeServer(env, server.id);
}

/** The servers still running; records of servers that died are removed on the way. */
export function liveServers(env: NodeJS.ProcessEnv): ManagedServer[] {
  const live: ManagedServer[] = [];
  for (const server of readServers(env)) {
    if (isAlive(server.pid)) live.push(server);
    else removeServer(env, server.id);
  }
  return live;
}
