// --warm with --acp (OC_EXEC_WARM=1): the run speaks to an ACP agent that outlives it, kept by a
// broker (acp-broker.ts) for the runs that fit it: the same command, workspace and environment (the
// policy and configuration opencode reads from it included), by a hash as warm servers are fitted
// (warm-key.ts). The first run that fits none starts a broker; a broker serves one run at a time,
// so a run that finds every fitting one busy starts another. A lock file per key lets one of two
// runs starting at the same moment start it. The run's ACP client is the same (acp-agent.ts): only
// the link to the agent is a socket instead of a pipe.
import { createHash, randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import type { ProcessEnd, StreamHandlers } from "../../sys/process.js";
import type { AgentLink } from "../acp/acp-agent.js";
import { liveServers, startDetached } from "../server/managed.js";
import { registryDir } from "../server/registry.js";
import { BROKER_ENV, type BrokerConfig, brokerLine, lineReader, readBrokerLine } from "./broker-protocol.js";
import { findOrStart } from "./start-lock.js";
import { fitEnvironment } from "./warm-key.js";

/** The agent as a run of its own would start it. */
export type AgentLaunch = { file: string; args: string[]; env: Record<string, string>; cwd: string };

export type WarmAgentRequest = {
  launch: AgentLaunch;
  /** The caller's environment: where the registry is. */
  env: NodeJS.ProcessEnv;
  idleTimeoutMs: number;
  /** --acp's value. */
  name: string;
};

/** A Unix socket's path must fit in sockaddr_un (108 bytes on Linux, the terminating NUL included). */
const SOCKET_PATH_MAX = 107;
const START_TIMEOUT_MS = 30_000;

/** Which broker's agent a run may speak to: one started with the same command, directory and environment. */
export function warmAgentKey(launch: AgentLaunch): string {
  const env = fitEnvironment(launch.env);
  const hash = createHash("sha256");
  hash.update(JSON.stringify({ acp: [launch.file, ...launch.args], cwd: launch.cwd, env }));
  return `acp-${hash.digest("hex").slice(0, 28)}`;
}

/** The broker at `socket`, if it takes this run: the connected socket; "busy" or null (gone) if not. */
function tryBroker(socket: string): Promise<Socket | "busy" | null> {
  return new Promise((resolve) => {
    const conn = connect(socket);
    let first = "";
    const fail = () => {
      conn.destroy();
      resolve(null);
    };
    conn.once("error", fail);
    conn.once("close", () => resolve(null));
    const onData = (chunk: Buffer) => {
      first += chunk.toString("utf8");
      const end = first.indexOf("\n");
      if (end === -1) return;
      conn.off("data", onData);
      conn.off("error", fail);
      conn.pause();
      const said = readBrokerLine(first.slice(0, end));
      if (said?.oc_exec_broker === "ready") return resolve(conn);
      conn.destroy();
      resolve(said?.oc_exec_broker === "busy" ? "busy" : null);
    };
    conn.on("data", onData);
  });
}

/** The first fitting broker that takes this run. */
async function idleBroker(env: NodeJS.ProcessEnv, key: string): Promise<Socket | null> {
  const fitting = liveServers(env)
    .filter((s) => s.warm_key === key && s.acp && s.url.startsWith("unix:"))
    .reverse();
  for (const broker of fitting) {
    const taken = await tryBroker(broker.url.slice("unix:".length));
    if (taken !== null && taken !== "busy") return taken;
  }
  return null;
}

/** Starts a broker for `key`: its socket, or why it did not start. */
async function startBroker(request: WarmAgentRequest, key: string): Promise<{ socket: string } | { problem: string }> {
  const id = randomBytes(6).toString("hex");
  const socket = join(registryDir(request.env), `${id}.sock`);
  if (Buffer.byteLength(socket) > SOCKET_PATH_MAX)
    return { problem: `its socket's path would be too long for a Unix socket: ${socket}` };
  const { launch } = request;
  const config: BrokerConfig = {
    id,
    socket,
    file: launch.file,
    args: launch.args,
    cwd: launch.cwd,
    idleTimeoutMs: request.idleTimeoutMs,
    warmKey: key,
    name: request.name,
    command: [launch.file, ...launch.args].join(" "),
  };
  // Its own environment is the agent's, the registry's location included.
  const said = await startDetached(
    ["server", "broker", id],
    { ...launch.env, [BROKER_ENV]: JSON.stringify(config) },
    launch.cwd,
    "the broker",
    START_TIMEOUT_MS,
  );
  if ("failed" in said) return { problem: said.failed };
  let report: { ready?: string; failed?: string } = {};
  try {
    report = JSON.parse(said.line) as typeof report;
  } catch {
    // said nothing we know
  }
  return report.ready ? { socket } : { problem: report.failed ?? `the broker said ${said.line}` };
}

/** A warm agent's link for this run: an idle one that fits, or one started for it; or why there is none. */
export async function warmAgentLink(
  request: WarmAgentRequest,
): Promise<{ link: (handlers: StreamHandlers) => AgentLink } | { problem: string }> {
  const key = warmAgentKey(request.launch);
  const got = await findOrStart(
    registryDir(request.env),
    key,
    START_TIMEOUT_MS + 10_000,
    () => idleBroker(request.env, key),
    async () => {
      const started = await startBroker(request, key);
      if ("problem" in started) return started;
      const taken = await tryBroker(started.socket);
      return taken === null || taken === "busy" ? { problem: "the broker it started did not take the run" } : taken;
    },
  );
  return "problem" in got ? got : { link: (handlers) => socketLink(got, handlers) };
}

/**
 * The agent over the broker's socket: its ACP lines to the client, its log lines as its stderr. The
 * run's end leaves the agent to the next run (`keep`), or has the broker end it (`retire`), and then
 * waits for the agent's end, as a run of its own waits for its process.
 */
function socketLink(socket: Socket, handlers: StreamHandlers): AgentLink {
  let exit: ProcessEnd | null = null;
  let stopped = false;
  const done = new Promise<ProcessEnd & { spawnError: string | null }>((resolve) => {
    socket.once("close", () =>
      resolve({ exitCode: exit?.exitCode ?? null, signal: exit?.signal ?? null, spawnError: null }),
    );
  });
  socket.on("error", () => socket.destroy());
  socket.on(
    "data",
    lineReader((line) => {
      const own = readBrokerLine(line);
      if (own?.oc_exec_broker === "log") handlers.stderr(Buffer.from(`${own.line}\n`));
      else if (own?.oc_exec_broker === "exit") exit = { exitCode: own.exitCode, signal: own.signal };
      else if (own === null) handlers.stdout(Buffer.from(`${line}\n`));
    }),
  );
  socket.resume();
  return {
    done,
    write(chunk) {
      if (socket.writable) socket.write(chunk);
    },
    endInput() {},
    stop({ keep }) {
      if (stopped) return;
      stopped = true;
      if (socket.writable && !keep) socket.write(brokerLine({ oc_exec_broker: "retire" }));
      socket.end();
    },
  };
}
