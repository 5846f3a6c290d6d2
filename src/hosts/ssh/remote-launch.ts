// How a command is launched on another host: `ssh … sh -c SCRIPT` (remote-script.ts), with the
// variables oc-exec set or changed and --pass-env, the argv and the input on stdin. A turn's
// opencode runs this way (ssh-backend.ts), and so does a --verify check, in the turn's directory
// there, stopped with everything it started when its stdin ends: on an --ssh turn, and on a
// server that `server start --ssh` started (over its supervisor's master connection; a direct one
// if that is gone).
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { CommandLaunch } from "../../engine/backend.js";
import type { LaunchProblem } from "../../kernel/problem.js";
import { DEFAULTS } from "../../plan/options.js";
import type { SshSpec } from "../../plan/ssh-spec.js";
import { envPattern } from "../sandbox/policy.js";
import { makeControlDir, SSH, startMaster } from "./master.js";
import { MARKER, preamble, remoteCommand } from "./remote-script.js";
import { commandArgs, type SshArgsInput } from "./ssh-args.js";

/** The environment that goes to the host: what oc-exec set or changed for the turn, and --pass-env. */
export function forwardedEnv(
  invocationEnv: Record<string, string>,
  baseEnv: NodeJS.ProcessEnv,
  passEnv: readonly string[],
): Record<string, string> {
  const passed = passEnv.map(envPattern);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(invocationEnv)) {
    // PWD is the remote directory's, set by cd there.
    if (name === "PWD") continue;
    if (baseEnv[name] !== value || passed.some((re) => re.test(name))) out[name] = value;
  }
  return out;
}

export type RemoteLaunchSpec = {
  args: SshArgsInput;
  /** The directory there, or null for the login directory. */
  dir: string | null;
  /** --pass-env names and patterns. */
  passEnv: readonly string[];
  /** This machine's environment, ssh's own. */
  env: NodeJS.ProcessEnv;
  /** Between TERM and KILL when the command is stopped. */
  killAfterMs: number;
};

/**
 * The local ssh command that runs `command` there, with `input` on its stdin. The command's
 * variables that differ from `base` (the turn's environment) are what oc-exec set: they go over.
 */
export function remoteLaunch(
  spec: RemoteLaunchSpec,
  command: Pick<CommandLaunch, "file" | "args" | "env">,
  input: string,
  base: NodeJS.ProcessEnv = spec.env,
  mode: "turn" | "stream" = "turn",
): { file: string; args: string[]; env: Record<string, string>; input: string } {
  const run = {
    mode,
    dir: spec.dir,
    graceSeconds: spec.killAfterMs / 1000,
    env: forwardedEnv(command.env, base, spec.passEnv),
    argv: [command.file, ...command.args],
  };
  const localEnv = Object.fromEntries(
    Object.entries(spec.env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  return {
    file: SSH,
    args: commandArgs(spec.args, remoteCommand()),
    env: localEnv,
    input: preamble(run, input) + input,
  };
}

/** A --verify check there: its stdin held open (its end stops it), the script's own lines told apart. */
export function remoteCheck(spec: RemoteLaunchSpec, command: CommandLaunch): CommandLaunch {
  return { ...remoteLaunch(spec, command, ""), holdInput: true, wrapperLine: new RegExp(`^${MARKER} `) };
}

/**
 * A connection to the host for a command that speaks over its stdio for the whole run (an ACP agent
 * there): the master connection, the launch (`stream` mode: the command reads what follows the
 * preamble on ssh's stdin; the end of that stdin stops it and everything it started), and the
 * --verify checks, in the same directory there. `close` ends the master.
 */
export async function openRemoteStream(
  ssh: SshSpec,
  env: NodeJS.ProcessEnv,
  connectTimeoutMs: number | null,
): Promise<RemoteStream | { problem: LaunchProblem }> {
  const controlDir = makeControlDir();
  const args: SshArgsInput = { spec: ssh, controlPath: join(controlDir, "c"), connectTimeoutMs };
  const master = await startMaster(args, env);
  const close = async () => {
    if ("stop" in master) await master.stop();
    rmSync(controlDir, { recursive: true, force: true });
  };
  if ("problem" in master) {
    await close();
    return master;
  }
  const spec = (killAfterMs: number): RemoteLaunchSpec => ({
    args,
    dir: ssh.dir,
    passEnv: ssh.passEnv,
    env,
    killAfterMs,
  });
  return {
    launch: (command, base, killAfterMs) => remoteLaunch(spec(killAfterMs), command, "", base, "stream"),
    check: (command) => remoteCheck(spec(DEFAULTS.killAfterMs), command),
    close,
  };
}

export type RemoteStream = {
  /** The local ssh command that runs `command` there, and what to write first on its stdin. */
  launch(
    command: Pick<CommandLaunch, "file" | "args" | "env">,
    base: NodeJS.ProcessEnv,
    killAfterMs: number,
  ): { file: string; args: string[]; env: Record<string, string>; input: string };
  /** A --verify check there, in the same directory. */
  check(command: CommandLaunch): CommandLaunch;
  close(): Promise<void>;
};
