// `server start --ssh DEST`: `opencode serve` on another host, bound to its loopback with the
// generated password, behind a local port forward of the run's ssh master. The supervisor (server/
// managed.ts) holds all of it: the ssh session whose stdin the remote script watches (it ends, so
// does the remote server and every tool below it), the master and its forward. Nothing of it
// outlives the supervisor: `server stop`, the idle time, or the connection dropping end both sides.
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { runSideCommand } from "../../domain/opencode/side-command.js";
import { hostOf, type SshSpec } from "../../plan/ssh-spec.js";
import { guardMark } from "../../sys/orphan-guard.js";
import { makeControlDir, SSH, startMaster } from "./master.js";
import { preamble, remoteCommand, SCRIPT_EXIT } from "./remote-script.js";
import { commandArgs, forwardArgs, type SshArgsInput } from "./ssh-args.js";

export type RemoteServe = {
  /** The local ssh whose session runs the remote server: killing it ends the server there. */
  child: ChildProcess;
  /** The remote directory the server serves, absolute. */
  dir: string;
  /** Forwards a local port to the remote server's; resolves with the local port. */
  forward(remotePort: number): Promise<number>;
  /** The master connection's control socket: later commands there (a --verify check) share it. */
  controlPath: string;
  /** Ends the master connection (and with it the forward). */
  close(): Promise<void>;
};

export type RemoteServeSpec = {
  ssh: SshSpec;
  binary: string;
  password: string;
  env: NodeJS.ProcessEnv;
  /** Where the remote server's log (its stderr) goes: the record's log file. */
  log: number;
  startTimeoutMs: number;
};

/** A free port on this machine's loopback, as the kernel hands it out. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export async function launchRemoteServe(spec: RemoteServeSpec): Promise<RemoteServe | { problem: string }> {
  const host = hostOf(spec.ssh.destination);
  const controlDir = makeControlDir();
  const args: SshArgsInput = {
    spec: spec.ssh,
    controlPath: join(controlDir, "c"),
    connectTimeoutMs: spec.startTimeoutMs,
  };
  const cleanup = () => rmSync(controlDir, { recursive: true, force: true });
  const master = await startMaster(args, spec.env);
  if ("problem" in master) {
    cleanup();
    return { problem: `${master.problem.name}: ${master.problem.message}` };
  }
  const close = async () => {
    await master.stop();
    cleanup();
  };
  // The directory (absolute, for the sessions' requests) and the binary, checked before the server starts.
  const where = await runSideCommand(SSH, commandArgs(args, remoteCommand()), {
    env: spec.env,
    timeoutMs: 30_000,
    input: preamble(
      {
        mode: "side",
        dir: spec.ssh.dir,
        graceSeconds: 1,
        env: {},
        argv: ["/bin/sh", "-c", 'command -v -- "$1" >/dev/null || exit 98; pwd', "sh", spec.binary],
      },
      "",
    ),
  });
  if (!where.ok) {
    await close();
    if (where.exitCode === SCRIPT_EXIT.notFound)
      return {
        problem: `OpencodeNotFound: ${spec.binary} is not on ${host}'s PATH (name it with --opencode, a path there)`,
      };
    if (where.exitCode === SCRIPT_EXIT.noDir)
      return { problem: `WorkspaceError: --dir ${spec.ssh.dir} does not exist on ${host}` };
    return {
      problem: `the remote side failed on ${host}: ${where.stderr.trim().split("\n").at(-1) ?? `exit ${where.exitCode}`}`,
    };
  }
  const dir = where.stdout.trim();
  const child = spawn(SSH, commandArgs(args, remoteCommand()), {
    env: { ...spec.env, ...guardMark() },
    stdio: ["pipe", "pipe", spec.log],
    detached: true,
  });
  child.stdin!.on("error", () => {});
  // Held open for the server's life: when it closes, the remote script ends the server.
  child.stdin!.write(
    preamble(
      {
        mode: "turn",
        dir,
        graceSeconds: 3,
        env: {
          OPENCODE_SERVER_PASSWORD: spec.password,
          OPENCODE_AUTO_SHARE: "false",
          OPENCODE_DISABLE_AUTOUPDATE: "true",
          OPENCODE_DISABLE_LSP_DOWNLOAD: "true",
        },
        argv: [spec.binary, "serve", "--hostname", "127.0.0.1", "--port", "0"],
      },
      "",
    ),
  );
  return {
    child,
    dir,
    controlPath: args.controlPath,
    async forward(remotePort) {
      const local = await freePort();
      const out = await runSideCommand(SSH, forwardArgs(args, local, remotePort), { env: spec.env, timeoutMs: 10_000 });
      if (!out.ok) throw new Error(`the port forward to ${host} failed: ${out.stderr.trim()}`);
      return local;
    },
    close,
  };
}
