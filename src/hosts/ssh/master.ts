// The master connection of a run (ControlMaster): authenticated once, shared by every ssh command
// of the run, ended with it. No ControlPersist: nothing of it outlives the process that made it.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { runSideCommand } from "../../domain/opencode/side-command.js";
import type { LaunchProblem } from "../../kernel/problem.js";
import { guardMark } from "../../sys/orphan-guard.js";
import { ownTempDir } from "../../sys/own-temp.js";
import { exitMasterArgs, masterArgs, type SshArgsInput, sshFailure } from "./ssh-args.js";

export const SSH = "ssh";

/**
 * A private directory for the run's control socket, named for this process; those of processes
 * that are gone (killed outright, so they could not clean up) are removed on the way.
 */
export const makeControlDir = (): string => ownTempDir("ssh");

/** A wait that does not keep the process alive on its own. */
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

/** Starts the master connection; resolves once it is up, or with ssh's reason it is not. */
export function startMaster(
  args: SshArgsInput,
  env: NodeJS.ProcessEnv,
): Promise<{ stop(): Promise<void> } | { problem: LaunchProblem }> {
  return new Promise((resolve) => {
    const child = spawn(SSH, masterArgs(args), {
      env: { ...env, ...guardMark() },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    let settled = false;
    const settle = (value: { stop(): Promise<void> } | { problem: LaunchProblem }) => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      resolve(value);
    };
    const exited = new Promise<void>((r) => child.once("close", () => r()));
    const stop = async () => {
      await runSideCommand(SSH, exitMasterArgs(args), { env, timeoutMs: 5_000 });
      const gone = await Promise.race([exited.then(() => true), delay(3_000).then(() => false)]);
      if (!gone) child.kill("SIGKILL");
    };
    child.once("error", (error) =>
      settle({ problem: { name: "SshNotFound", message: `could not run ssh (the OpenSSH client): ${error.message}` } }),
    );
    child.once("close", () => settle({ problem: sshFailure(args.spec.destination, stderr) }));
    // The socket appears once the master has authenticated.
    const poll = setInterval(() => {
      if (existsSync(args.controlPath)) settle({ stop });
    }, 25);
  });
}
