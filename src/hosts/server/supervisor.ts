// `oc-exec server supervise ID`: the detached process that runs one opencode server for its whole
// life (here, in a sandbox, or on another host over ssh), keeps its registry record, stops it after
// its idle time or when its owner dies, and releases what it held. managed.ts starts it.
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXIT_CODES } from "../../contract/exit-codes.js";
import { readOpencodeConfigs } from "../../domain/opencode/config-sources.js";
import { isTelemetryVariable } from "../../domain/telemetry/trace-settings.js";
import { formatDuration } from "../../kernel/duration.js";
import { guardMark } from "../../sys/orphan-guard.js";
import { ownTempDir } from "../../sys/own-temp.js";
import { isAlive } from "../../sys/pids.js";
import { stopProcessTree } from "../../sys/process-tree.js";
import { forwardToSocket, INNER_PORT } from "../sandbox/inbound.js";
import { CHECK_COMMAND, type SandboxCheck } from "../sandbox/policy.js";
import { newCommandId, openSandbox, type Sandbox } from "../sandbox/sandbox.js";
import {
  type GuardReport,
  guardProblem,
  parseGuardReport,
  serveReadingPassword,
  withGuardPlugin,
  writeGuardPlugin,
} from "../sandbox/server-guard.js";
import { projectConfigDisabled } from "../sandbox/workspace-code.js";
import { launchRemoteServe, type RemoteServe } from "../ssh/remote-serve.js";
import { ServerClient, ServerError } from "./client.js";
import { type ManagedServer, readLeases, refusedFile, registryDir, removeServer, writeServer } from "./registry.js";
import { STOP_GRACE_MS, SUPERVISE_ENV, type SuperviseConfig, type SupervisorReport } from "./supervise-protocol.js";

/** How often the supervisor looks for turns whose oc-exec died. */
const LEASE_CHECK_MS = 1_000;
/** How long after its instance started a sandboxed server's guard report may take to arrive. */
const GUARD_WAIT_MS = 2_000;

/** The sandbox a server runs in: its proxy's command id, the check command, the guard plugin's directory. */
type ServerSandboxRun = { sandbox: Sandbox; id: string; check: SandboxCheck | null; guardDir: string };

/** opencode serve started (here, in a sandbox, or on another host), or why it could not be. */
type Launched =
  | {
      opencode: ReturnType<typeof spawn>;
      sandbox: ServerSandboxRun | null;
      remote?: RemoteServe;
    }
  | { problem: string };

/** `server supervise ID`: runs in the background for the server's whole life. */
export async function supervise(env: NodeJS.ProcessEnv, write: (line: string) => void): Promise<number> {
  const report = (value: SupervisorReport) => write(`${JSON.stringify(value)}\n`);
  const config = JSON.parse(env[SUPERVISE_ENV] ?? "null") as SuperviseConfig | null;
  if (!config) return EXIT_CODES.config_error;
  // The supervisor's own mark on everything it starts, the sandbox library's proxy bridges included
  // (they inherit this process's environment): if the supervisor is killed outright, the orphan
  // watcher ends opencode, its tools and the bridges.
  Object.assign(process.env, guardMark());
  const serverEnv: NodeJS.ProcessEnv = { ...env, ...guardMark(), OPENCODE_SERVER_PASSWORD: config.password };
  delete serverEnv[SUPERVISE_ENV];
  delete serverEnv.OPENCODE_SERVER_USERNAME;
  // As for a turn's opencode (domain/opencode/invocation.ts): a server exports no traces of its own.
  for (const name of Object.keys(serverEnv)) if (isTelemetryVariable(name)) delete serverEnv[name];
  // As for a turn (hosts/process/process-backend.ts): opencode's runtime leaves a 5.5 MB native library in
  // TMPDIR at every start; a local server without a sandbox (which has its own) gets a TMPDIR for
  // its life, removed when it ends.
  const ownTmp = config.ssh || config.sandbox ? null : ownTempDir("opencode", env.TMPDIR || undefined);
  if (ownTmp) serverEnv.TMPDIR = ownTmp;
  mkdirSync(registryDir(env), { recursive: true, mode: 0o700 });
  const log = openSync(join(registryDir(env), `${config.id}.log`), "a", 0o600);
  const launched: Launched = config.ssh
    ? await launchRemoteServe({
        ssh: config.ssh,
        binary: config.binary,
        password: config.password,
        env: serverEnv,
        log,
        startTimeoutMs: config.startTimeoutMs,
      }).then((r) => ("problem" in r ? r : { opencode: r.child, sandbox: null, remote: r }))
    : await launchServe(env, config, serverEnv, log);
  closeSync(log);
  if ("problem" in launched) {
    report({ unsupported: launched.problem });
    return EXIT_CODES.config_error;
  }
  const { opencode, sandbox } = launched;
  const remote = launched.remote ?? null;
  const pid = opencode.pid;
  let exited = false;
  opencode.once("exit", () => {
    exited = true;
  });
  // opencode's stdout, a line at a time until the server is ready: the line that says where it
  // listens, and a sandboxed server's guard report (hosts/sandbox/server-guard.ts). Only the unfinished
  // last line is kept, and nothing once the server serves (watch() drains the stream).
  let guardReport: GuardReport | null = null;
  let onListening = (_url: string) => {};
  let partial = "";
  const readLines = (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      guardReport ??= parseGuardReport(line);
      const match = /listening on (https?:\/\/\S+)/.exec(line);
      if (match) onListening(match[1]!.replace(/\/$/, ""));
    }
  };
  opencode.stdout!.on("data", readLines);
  const listening = await new Promise<string | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), config.startTimeoutMs);
    onListening = (found) => {
      clearTimeout(timer);
      resolve(found);
    };
    opencode.once("exit", () => {
      clearTimeout(timer);
      resolve(null);
    });
  });
  // A sandboxed server listens on the namespace's own loopback: the URL is the host's way in.
  const forward =
    listening !== null && sandbox ? await forwardToSocket(sandbox.sandbox.inboundSocket, config.port) : null;
  // A remote server listens on its host's loopback: the way in is a forward of the ssh master.
  const remotePort = remote && listening !== null ? Number(new URL(listening).port) : null;
  const local = remote && remotePort ? await remote.forward(remotePort).catch(() => null) : null;
  const url = forward
    ? `http://127.0.0.1:${forward.port}`
    : remote
      ? local
        ? `http://127.0.0.1:${local}`
        : null
      : listening;
  const release = async () => {
    forward?.close();
    if (ownTmp) rmSync(ownTmp, { recursive: true, force: true });
    if (sandbox) rmSync(sandbox.guardDir, { recursive: true, force: true });
    await sandbox?.sandbox.close();
    await remote?.close();
  };
  if (url === null || pid === undefined) {
    if (pid !== undefined) await stopProcessTree(pid, STOP_GRACE_MS);
    await release();
    report({
      failed: `opencode serve did not start${exited ? ` (it exited; see ${join(registryDir(env), `${config.id}.log`)})` : ` within ${formatDuration(config.startTimeoutMs, "exact")}`}`,
      timedOut: !exited,
    });
    return exited ? EXIT_CODES.agent_error : EXIT_CODES.timeout;
  }
  const client = new ServerClient(new URL(url), { username: "opencode", password: config.password });
  // A release whose server lacks the routes a turn needs is refused now, not at the first turn.
  const tooOld = await client.health().then(
    () => null,
    (error: unknown) => (error instanceof ServerError && error.kind === "too_old" ? error.message : null),
  );
  if (tooOld) {
    await stopProcessTree(pid, STOP_GRACE_MS);
    await release();
    report({ unsupported: `${tooOld}, or use oc-exec without a server` });
    return EXIT_CODES.config_error;
  }
  if (sandbox) {
    const unguarded = await guardServer(client, config.dir, () => guardReport);
    if (unguarded) {
      await stopProcessTree(pid, STOP_GRACE_MS);
      await release();
      report({ unsupported: `--sandbox ${config.sandbox?.mode} cannot serve: ${unguarded}` });
      return EXIT_CODES.config_error;
    }
  }
  opencode.stdout!.off("data", readLines);
  const record: ManagedServer = {
    id: config.id,
    url,
    pid,
    supervisor_pid: process.pid,
    dir: remote ? remote.dir : config.dir,
    started_at: new Date().toISOString(),
    idle_timeout_ms: config.idleTimeoutMs,
    opencode: { path: config.binary, version: config.version },
    username: "opencode",
    password: config.password,
    ...(sandbox && config.sandbox
      ? {
          sandbox: {
            spec: config.sandbox,
            info: sandbox.sandbox.info,
            ...(sandbox.check ? { check: sandbox.check } : {}),
            // Turns then skip the check of their directory's code: opencode loads none of it.
            ...(projectConfigDisabled(env) ? { project_config: false as const } : {}),
          },
        }
      : {}),
    ...(config.warmKey ? { warm_key: config.warmKey } : {}),
    ...(config.ssh
      ? {
          ssh: {
            destination: config.ssh.destination,
            options: config.ssh.options,
            config_file: config.ssh.configFile,
            pass_env: config.ssh.passEnv,
            ...(remote ? { control_path: remote.controlPath } : {}),
          },
        }
      : {}),
  };
  const unrecorded = writeServer(env, record);
  if (unrecorded) {
    // A server no record names could never be attached to, nor stopped by `server stop`.
    await stopProcessTree(pid, STOP_GRACE_MS);
    await release();
    report({ failed: `the server's record could not be written: ${unrecorded.problem}`, timedOut: false });
    return EXIT_CODES.config_error;
  }
  // Turns on the server read the refusals from here: the proxy that names them runs in this process.
  const unwatch = sandbox?.sandbox.onRefused(sandbox.id, (hosts) =>
    writeFileSync(refusedFile(env, config.id), hosts.map((h) => `${h}\n`).join(""), { mode: 0o600 }),
  );
  report({ ready: url });

  const status = await watch(env, config, client, opencode);
  unwatch?.();
  await release();
  return status;
}

/**
 * A sandboxed server's first instance is started now, before any turn (the guard plugin loads
 * with it), and the plugin's report decides whether the server may serve: why not, or null.
 */
async function guardServer(
  client: ServerClient,
  dir: string,
  report: () => GuardReport | null,
): Promise<string | null> {
  try {
    await client.listSessions(dir);
  } catch (error) {
    return `opencode serve did not start its instance for ${dir}: ${(error as Error).message}`;
  }
  // The plugin prints before the instance answers; a moment more for the pipe.
  for (let waited = 0; report() === null && waited < GUARD_WAIT_MS; waited += 50) await sleep(50);
  return guardProblem(report(), process.platform);
}

/**
 * Starts `opencode serve` on 127.0.0.1: directly, or inside the sandbox the server asked for, where
 * it listens on the namespace's loopback and a bridge leads in (hosts/sandbox/inbound.ts). The password
 * goes to opencode alone, and its guard plugin keeps it from the tools (hosts/sandbox/server-guard.ts).
 */
async function launchServe(
  env: NodeJS.ProcessEnv,
  config: SuperviseConfig,
  serverEnv: NodeJS.ProcessEnv,
  log: number,
): Promise<{ opencode: ReturnType<typeof spawn>; sandbox: ServerSandboxRun | null } | { problem: string }> {
  const serve = { file: config.binary, args: ["serve", "--hostname", "127.0.0.1", "--port", String(config.port)] };
  const options = { cwd: config.dir, detached: true, stdio: ["ignore", "pipe", log] as ["ignore", "pipe", number] };
  if (!config.sandbox)
    return { opencode: spawn(serve.file, serve.args, { ...options, env: serverEnv }), sandbox: null };
  const opened = await openSandbox(config.sandbox, {
    workspace: config.dir,
    env,
    models: config.models,
    configs: readOpencodeConfigs(env, config.dir, env.OPENCODE_CONFIG_CONTENT),
  });
  if ("problem" in opened) return { problem: opened.problem.message };
  const id = newCommandId();
  const guard = writeGuardPlugin();
  const inner = serveReadingPassword(serve.file, ["serve", "--hostname", "127.0.0.1", "--port", String(INNER_PORT)]);
  const innerEnv: NodeJS.ProcessEnv = {
    ...serverEnv,
    OPENCODE_CONFIG_CONTENT: withGuardPlugin(serverEnv.OPENCODE_CONFIG_CONTENT, guard.url),
  };
  delete innerEnv.OPENCODE_SERVER_PASSWORD;
  let launch: Awaited<ReturnType<Sandbox["wrap"]>>;
  try {
    launch = await opened.sandbox.wrap({ ...inner, env: innerEnv as Record<string, string> }, id, {
      port: INNER_PORT,
    });
  } catch (error) {
    rmSync(guard.dir, { recursive: true, force: true });
    await opened.sandbox.close();
    return { problem: `--sandbox ${config.sandbox.mode} cannot be set up for a server: ${(error as Error).message}` };
  }
  // The turns' --verify checks run in this sandbox too, started by the turns' own processes. Their
  // command is made before opencode starts: the library's mounts depend on which protected paths
  // exist, and opencode's own sandbox creates some (its mount points) as it starts.
  let check: SandboxCheck | null = null;
  try {
    const wrapped = await opened.sandbox.wrap({ ...CHECK_COMMAND, env: {} }, newCommandId());
    check = { argv: [wrapped.file, ...wrapped.args], tmp: wrapped.env.TMPDIR ?? tmpdir() };
  } catch {
    // A library release whose command cannot be reused: --verify on this server stays refused.
  }
  // The password reaches opencode alone, through its stdin (hosts/sandbox/server-guard.ts).
  const opencode = spawn(launch.file, launch.args, { ...options, stdio: ["pipe", "pipe", log], env: launch.env });
  opencode.stdin!.end(`${config.password}\n`);
  return { opencode, sandbox: { sandbox: opened.sandbox, id, check, guardDir: guard.dir } };
}

/**
 * The supervisor's life after the report: it ends (resolving, so the entry sets the exit status)
 * when opencode exits, when `server stop` signals it, or after the idle time with no turn running.
 * Everything it holds open is released then, so the process ends by itself.
 */
function watch(
  env: NodeJS.ProcessEnv,
  config: SuperviseConfig,
  client: ServerClient,
  opencode: ReturnType<typeof spawn>,
): Promise<number> {
  const pid = opencode.pid!;
  let lastActivity = Date.now();
  const busy = new Set<string>();
  let ended = false;
  let closeStream: (() => void) | null = null;
  let idleTimer: NodeJS.Timeout | null = null;
  let leaseTimer: NodeJS.Timeout | null = null;
  return new Promise<number>((resolve) => {
    const end = () => {
      ended = true;
      if (idleTimer) clearInterval(idleTimer);
      if (leaseTimer) clearInterval(leaseTimer);
      closeStream?.();
      for (const s of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.off(s, onSignal);
      removeServer(env, config.id);
      resolve(EXIT_CODES.success);
    };
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      await stopProcessTree(pid, STOP_GRACE_MS);
      end();
    };
    // SIGHUP: the terminal `server start` ran in went away; the server is meant to outlive it.
    const onSignal = (signal: NodeJS.Signals) => {
      if (signal !== "SIGHUP") void stop();
    };
    for (const s of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(s, onSignal);
    opencode.once("exit", () => {
      if (!stopping) end();
    });
    opencode.stdout!.resume();

    // Activity is what the server's global event stream shows about sessions; a session that is
    // busy (a long, quiet tool call) holds the server up whatever the idle time.
    void (async () => {
      while (!ended) {
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
          closeStream = () => stream.close();
          if (ended) stream.close();
          while (await stream.pump()) {}
        } catch {
          // The stream broke; if the server is gone, its exit ends the supervisor.
        }
        if (!ended) await sleep(1000);
      }
    })();
    // A turn whose oc-exec died (kill -9, the OOM killer) is aborted rather than left to run.
    leaseTimer = setInterval(() => {
      // The process the server was started for is gone (a batch killed outright): so is its reason to run.
      if (config.ownerPid && !isAlive(config.ownerPid)) void stop();
      for (const lease of readLeases(env, config.id)) {
        if (isAlive(lease.pid)) continue;
        lease.release();
        busy.delete(lease.session);
        void client.abort(lease.directory, lease.session).catch(() => {});
      }
    }, LEASE_CHECK_MS);
    if (config.idleTimeoutMs > 0) {
      idleTimer = setInterval(
        () => {
          if (busy.size > 0 || Date.now() - lastActivity < config.idleTimeoutMs) return;
          // A turn holds a lease while it runs: a server is not idle while one does, even when its
          // event stream (connected late on a loaded machine) missed the session going busy.
          if (readLeases(env, config.id).some((lease) => isAlive(lease.pid))) return;
          void stop();
        },
        Math.min(5_000, Math.max(200, config.idleTimeoutMs / 4)),
      );
    }
  });
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
