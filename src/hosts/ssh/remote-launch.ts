// How a command is launched on another host: `ssh … sh -c SCRIPT` (remote-script.ts), with the
// variables oc-exec set or changed and --pass-env, the argv and the input on stdin. A turn's
// opencode runs this way (ssh-backend.ts), and so does a --verify check, in the turn's directory
// there, stopped with everything it started when its stdin ends: on an --ssh turn, and on a
// server that `server start --ssh` started (over its supervisor's master connection; a direct one
// if that is gone).
import type { CommandLaunch } from "../../engine/backend.js";
import { envPattern } from "../sandbox/policy.js";
import { SSH } from "./master.js";
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
): { file: string; args: string[]; env: Record<string, string>; input: string } {
  const run = {
    mode: "turn" as const,
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
