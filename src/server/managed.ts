// Warm servers for scripts: `oc-exec server start` launches a supervisor (this same program,
// `server supervise ID`, detached), which starts `opencode serve` on loopback with a generated
// password, records it (registry.ts), reports its URL back, and then watches it: the server stops
// itself after its idle time with no turn running, and the record goes when the server goes.
// `server stop` signals the supervisor, which stops opencode and every tool process below it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { descendantsOf, signalProcess } from "../opencode/process-tree.js";
import { ConfigError } from "../outcome/errors.js";
import { ServerClient, ServerError } from "./client.js";
import {
  findServer,
  isAlive,
  type ManagedServer,
  readServers,
  registryDir,
  removeServer,
  writeServer,
} from "./registry.js";

export type StartRequest = {
  binary: string;
  version: string | null;
  dir: string;
  idleTimeoutMs: number;
  port: number;
  env: NodeJS.ProcessEnv;
  /** How to run this program again as the supervisor: [node, script]. */
  self: string[];
  startTimeoutMs: number;
};

type SuperviseConfig = Omit<StartRequest, "env" | "self" | "startTimeoutMs"> & {
  id: string;
  password: string;
  startTimeoutMs: number;
};

const SUPERVISE_ENV = "OC_EXEC_SUPERVISE";
const STOP_GRACE_MS = 3_000;

/** Starts a server through a detached supervisor; resolves with its record, or rejects with why not. */
export async function startServer(request: StartRequest): Promise<ManagedServer> {
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
  };
  const [command, ...args] = request.self;
  const child = spawn(command!, [...args, "server", "supervise", id], {
    detached: true,
    stdio: ["ignore", "pipe", "ignore"],
    env: { ...request.env, [SUPERVISE_ENV]: JSON.stringify(config) },
    cwd: request.dir,
  });
  const report = await new Promise<string>((resolve) => {
    let text = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes("\n")) resolve(text.slice(0, text.indexOf("\n")));
    });
    child.once("exit", (code, signal) => resolve(text || `failed the supervisor exited (${signal ?? code})`));
    child.once("error", (error) => resolve(`failed ${error.message}`));
  });
  child.stdout!.destroy();
  child.unref();
  if (report.startsWith("unsupported ")) throw new ConfigError(report.slice("unsupported ".length));
  if (!report.startsWith("ready ")) throw new Error(report.replace(/^failed /, ""));
  const server = findServer(request.env, report.slice("ready ".length));
  if (!server) throw new Error("the server started but its record is missing");
  return server;
}

/** `server supervise ID`: runs in the background for the server's whole life. */
export async function supervise(env: NodeJS.ProcessEnv, write: (line: string) => void): Promise<number> {
  const config = JSON.parse(env[SUPERVISE_ENV] ?? "null") as SuperviseConfig | null;
  if (!config) return 5;
  const serverEnv: NodeJS.ProcessEnv = { ...env, OPENCODE_SERVER_PASSWORD: config.password };
  delete serverEnv[SUPERVISE_ENV];
  delete serverEnv.OPENCODE_SERVER_USERNAME;
  mkdirSync(registryDir(env), { recursive: true, mode: 0o700 });
  const log = openSync(join(registryDir(env), `${config.id}.log`), "a", 0o600);
  const opencode = spawn(config.binary, ["serve", "--hostname", "127.0.0.1", "--port", String(config.port)], {
    cwd: config.dir,
    env: serverEnv,
    detached: true,
    stdio: ["ignore", "pipe", log],
  });
  closeSync(log);
  const pid = opencode.pid;
  let exited = false;
  opencode.once("exit", () => {
    exited = true;
  });
  const url = await new Promise<string | null>((resolve) => {
    let seen = "";
    const timer = setTimeout(() => resolve(null), config.startTimeoutMs);
    opencode.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on (https?:\/\/\S+)/.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!.replace(/\/$/, ""));
      }
    });
    opencode.once("exit", () => {
      clearTimeout(timer);
      resolve(null);
    });
  });
  if (url === null || pid === undefined) {
    if (pid !== undefined) stopTree(pid, "SIGKILL");
    write(
      `failed opencode serve did not start${exited ? ` (it exited; see ${join(registryDir(env), `${config.id}.log`)})` : ` within ${config.startTimeoutMs} ms`}\n`,
    );
    return 1;
  }
  const client = new ServerClient(new URL(url), { username: "opencode", password: config.password });
  // A release whose server lacks the routes a turn needs is refused now, not at the first turn.
  const tooOld = await client.health().then(
    () => null,
    (error: unknown) => (error instanceof ServerError && error.kind === "too_old" ? error.message : null),
  );
  if (tooOld) {
    await stopProcessTree(pid);
    write(`unsupported ${tooOld.replace(/ or run without --attach$/, " or use oc-exec without a server")}\n`);
    return 5;
  }
  const record: ManagedServer = {
    id: config.id,
    url,
    pid,
    supervisor_pid: process.pid,
    dir: config.dir,
    started_at: new Date().toISOString(),
    idle_timeout_ms: config.idleTimeoutMs,
    opencode: { path: config.binary, version: config.version },
    username: "opencode",
    password: config.password,
  };
  writeServer(env, record);
  write(`ready ${url}\n`);

  let lastActivity = Date.now();
  const busy = new Set<string>();
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await stopProcessTree(pid);
    removeServer(env, config.id);
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  process.on("SIGHUP", () => {});
  opencode.once("exit", () => {
    removeServer(env, config.id);
    process.exit(0);
  });
  opencode.stdout!.resume();

  // Activity is what the server's global event stream shows about sessions; a session that is
  // busy (a long, quiet tool call) holds the server up whatever the idle time.
  void (async () => {
    for (;;) {
      try {
        const stream = await client.globalEvents((data) => {
          const event = safeParse(data);
          const payload = event?.payload;
          const sessionId = payload?.properties?.sessionID;
          if (typeof sessionId !== "string") return;
          lastActivity = Date.now();
          if (payload?.type === "session.status") {
            if (payload.properties?.status?.type === "busy") busy.add(sessionId);
            else busy.delete(sessionId);
          } else if (payload?.type === "session.idle" || payload?.type === "session.deleted") busy.delete(sessionId);
        });
        while (await stream.pump()) {}
      } catch {
        // The stream broke; if the server is gone, its exit handler ends this process.
      }
      await sleep(1000);
    }
  })();
  if (config.idleTimeoutMs > 0) {
    setInterval(
      () => {
        if (busy.size === 0 && Date.now() - lastActivity >= config.idleTimeoutMs) void stop();
      },
      Math.min(5_000, Math.max(200, config.idleTimeoutMs / 4)),
    );
  }
  return await new Promise<number>(() => {});
}

type GlobalEvent = {
  payload?: { type?: string; properties?: { sessionID?: unknown; status?: { type?: string } } };
};

function safeParse(data: string): GlobalEvent | null {
  try {
    return JSON.parse(data) as GlobalEvent;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Signals opencode, its group, and every process below it (tools may run in sessions of their own). */
function stopTree(pid: number, signal: NodeJS.Signals): number[] {
  const below = descendantsOf(pid);
  signalProcess(pid, signal);
  for (const child of below) signalProcess(child, signal);
  return below;
}

/** SIGTERM to the tree, then SIGKILL to whatever is left after the grace period; resolves when gone. */
async function stopProcessTree(pid: number): Promise<void> {
  const seen = new Set([pid, ...stopTree(pid, "SIGTERM")]);
  const deadline = Date.now() + STOP_GRACE_MS;
  while (Date.now() < deadline && [...seen].some(isAlive)) await sleep(50);
  for (const p of seen) if (isAlive(p)) signalProcess(p, "SIGKILL");
  for (const child of descendantsOf(pid)) signalProcess(child, "SIGKILL");
  const hard = Date.now() + STOP_GRACE_MS;
  while (Date.now() < hard && [...seen].some(isAlive)) await sleep(50);
}

/** Stops one managed server: through its supervisor, or directly when the supervisor is gone. */
export async function stopServer(env: NodeJS.ProcessEnv, server: ManagedServer): Promise<void> {
  if (isAlive(server.supervisor_pid)) {
    signalProcess(server.supervisor_pid, "SIGTERM");
    const deadline = Date.now() + STOP_GRACE_MS * 3;
    while (Date.now() < deadline && (isAlive(server.supervisor_pid) || isAlive(server.pid))) await sleep(50);
  }
  if (isAlive(server.pid)) await stopProcessTree(server.pid);
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
