// `oc-exec server broker ID`: the detached process that keeps one warm ACP agent (--warm --acp) for
// the runs that fit it (warm-agent.ts). It starts the agent in a process group of its own, with a
// TMPDIR of its own, and serves one run at a time on a Unix socket in the registry's directory
// (readable by the user only): the run's lines go to the agent and the agent's to the run, as they
// are. The agent answers `initialize` once; a later run's is answered with what it said then. A run
// that leaves with a request unanswered either way (it was stopped mid-turn, or killed), or that says
// `retire`, ends the agent: one stopped mid-turn may still be busy with it, and no later run may
// meet what is left of it. So does the idle limit, `server stop`, and the agent's own end.
import { chmodSync, closeSync, openSync, rmSync, writeSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { EXIT_CODES } from "../../contract/exit-codes.js";
import { guardMark } from "../../sys/orphan-guard.js";
import { ownTempDir } from "../../sys/own-temp.js";
import { type ProcessEnd, startProcess } from "../../sys/process.js";
import { registryDir, removeServer, writeServer } from "../server/registry.js";
import { STOP_GRACE_MS } from "../server/supervise-protocol.js";
import {
  BROKER_ENV,
  type BrokerConfig,
  brokerLine,
  initializeAnswer,
  lineReader,
  readBrokerLine,
  resultOf,
  rpcShape,
} from "./broker-protocol.js";

/** The one report to the run that started the broker: `{ready: url}` or `{failed}`, a JSON line on stdout. */
export async function runBroker(env: NodeJS.ProcessEnv, write: (line: string) => void): Promise<number> {
  const config = JSON.parse(env[BROKER_ENV] ?? "null") as BrokerConfig | null;
  if (!config) return EXIT_CODES.config_error;
  // As the server supervisor does: if the broker is killed outright, the orphan watcher ends the agent.
  Object.assign(process.env, guardMark());
  const agentEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && name !== BROKER_ENV) agentEnv[name] = value;
  const tmp = ownTempDir("opencode", env.TMPDIR || undefined);
  agentEnv.TMPDIR = tmp;
  const log = openSync(join(registryDir(env), `${config.id}.log`), "a", 0o600);

  let client: Socket | null = null;
  // The requests of the run connected (by id, with their method) and the agent's to it, unanswered.
  const fromClient = new Map<string | number, string>();
  const fromAgent = new Set<string | number>();
  let initialized: unknown = null;
  let ending = false;
  let idleTimer: NodeJS.Timeout | undefined;

  const toClient = (text: string) => {
    if (client && !client.destroyed) client.write(text);
  };
  const agent = startProcess(
    { file: config.file, args: config.args, env: agentEnv, cwd: config.cwd, input: "" },
    {
      stdout: lineReader((line) => {
        const shape = rpcShape(line);
        if (shape.kind === "response" && fromClient.has(shape.id)) {
          if (fromClient.get(shape.id) === "initialize" && initialized === null) initialized = resultOf(line);
          fromClient.delete(shape.id);
        }
        // The agent asks a run that is not there (a permission after its run left): nobody can answer.
        if (shape.kind === "request") {
          if (client === null) return void retire();
          fromAgent.add(shape.id);
        }
        toClient(`${line}\n`);
      }),
      stderr: lineReader((line) => {
        if (client) toClient(brokerLine({ oc_exec_broker: "log", line }));
        else writeSync(log, `${line}\n`);
      }),
    },
    { keepInputOpen: true },
  );

  const server = createServer({ allowHalfOpen: true });
  const finished = new Promise<ProcessEnd>((resolve) => {
    void agent.done.then((end) => {
      // The agent's end, for the run connected; then nothing more is served.
      toClient(brokerLine({ oc_exec_broker: "exit", exitCode: end.exitCode, signal: end.signal }));
      client?.end();
      resolve(end);
    });
  });
  /** Ends the agent and everything it started; the broker exits once it is gone. */
  function retire() {
    if (ending) return;
    ending = true;
    clearTimeout(idleTimer);
    server.close();
    agent.endInput();
    agent.stop({ graceMs: STOP_GRACE_MS });
  }
  const idle = () => {
    clearTimeout(idleTimer);
    if (config.idleTimeoutMs > 0) idleTimer = setTimeout(retire, config.idleTimeoutMs);
  };
  process.once("SIGTERM", retire);
  process.once("SIGINT", retire);

  server.on("connection", (socket) => {
    if (client !== null || ending) {
      socket.end(brokerLine({ oc_exec_broker: "busy" }));
      return;
    }
    client = socket;
    clearTimeout(idleTimer);
    socket.write(brokerLine({ oc_exec_broker: "ready" }));
    let retiring = false;
    socket.on(
      "data",
      lineReader((line) => {
        const own = readBrokerLine(line);
        if (own?.oc_exec_broker === "retire") {
          retiring = true;
          return retire();
        }
        const shape = rpcShape(line);
        if (shape.kind === "request" && shape.method === "initialize" && initialized !== null)
          return void socket.write(initializeAnswer(shape.id, initialized));
        if (shape.kind === "request") fromClient.set(shape.id, shape.method);
        if (shape.kind === "response") fromAgent.delete(shape.id);
        agent.write(`${line}\n`);
      }),
    );
    // The run is done with the agent: another may have it, unless this one left anything unanswered.
    // A retiring run is answered by the agent's end (its exit line), so it waits until nothing is left.
    socket.on("end", () => {
      if (!retiring) socket.end();
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      if (client !== socket) return;
      client = null;
      if (fromClient.size > 0 || fromAgent.size > 0) retire();
      else if (!ending) idle();
    });
  });

  const listening = await new Promise<string | null>((resolve) => {
    rmSync(config.socket, { force: true });
    server.once("error", (error) => resolve(error.message));
    // Only the user can connect: the registry's directory is theirs alone, and so is the socket.
    server.listen(config.socket, () => {
      chmodSync(config.socket, 0o600);
      resolve(null);
    });
  });
  // No pid: the agent could not be started at all (its exit says why, to no one: the report does).
  if (listening !== null || agent.pid === undefined) {
    write(`${JSON.stringify({ failed: listening ?? "the agent did not start" })}\n`);
    retire();
  } else {
    const problem = writeServer(env, {
      id: config.id,
      url: `unix:${config.socket}`,
      pid: agent.pid,
      supervisor_pid: process.pid,
      dir: config.cwd,
      started_at: new Date().toISOString(),
      idle_timeout_ms: config.idleTimeoutMs,
      opencode: { path: config.command, version: null },
      username: "",
      password: "",
      warm_key: config.warmKey,
      acp: { name: config.name },
    });
    write(`${JSON.stringify(problem ? { failed: problem.problem } : { ready: `unix:${config.socket}` })}\n`);
    if (problem) retire();
    else idle();
  }
  await finished;
  server.close();
  removeServer(env, config.id);
  rmSync(config.socket, { force: true });
  rmSync(tmp, { recursive: true, force: true });
  closeSync(log);
  return EXIT_CODES.success;
}
