// Runs a shell command in a real terminal (tmux) and collects what the screen showed until the
// command printed "exit=N": how a person sees oc-exec's spinner.
import { execFileSync } from "node:child_process";
import { waitFor } from "./procs.js";

export async function screenFrames(
  command: string,
  env: Record<string, string>,
  { rows = 40, timeoutMs = 90_000 } = {},
): Promise<string[]> {
  const session = `oc-exec-test-${process.pid}-${Date.now()}`;
  const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  const shell = `${command}; echo "exit=$?"; sleep 30`;
  execFileSync("tmux", ["new-session", "-d", "-s", session, "-x", "150", "-y", String(rows), ...envArgs, shell]);
  try {
    const frames: string[] = [];
    await waitFor(
      () => {
        frames.push(execFileSync("tmux", ["capture-pane", "-p", "-t", session], { encoding: "utf8" }));
        return frames.at(-1)!.includes("exit=");
      },
      timeoutMs,
      "the command to finish in tmux",
    );
    return frames;
  } finally {
    execFileSync("tmux", ["kill-session", "-t", session]);
  }
}
