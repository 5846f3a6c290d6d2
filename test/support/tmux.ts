// Runs a shell command in a real terminal (tmux) and collects what the screen showed until the
// command printed "exit=N": how a person sees oc-exec's spinner.
import { execFileSync } from "node:child_process";
import { waitFor } from "./procs.js";

export async function screenFrames(
  command: string,
  env: Record<string, string>,
  {
    rows = 40,
    timeoutMs = 90_000,
    onFrame,
  }: { rows?: number; timeoutMs?: number; onFrame?: (frame: string) => void } = {},
): Promise<string[]> {
  const session = `oc-exec-test-${process.pid}-${Date.now()}`;
  // CI services set CI=true, and tmux hands the test's environment on to the command; libraries
  // such as ora change their behaviour on it. Setting it always makes a local run see the terminal
  // a CI run sees (a batch's live line once froze only under CI).
  const envArgs = Object.entries({ CI: "true", ...env }).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  const shell = `${command}; echo "exit=$?"; sleep 30`;
  execFileSync("tmux", ["new-session", "-d", "-s", session, "-x", "150", "-y", String(rows), ...envArgs, shell]);
  try {
    const frames: string[] = [];
    await waitFor(
      () => {
        const frame = execFileSync("tmux", ["capture-pane", "-p", "-t", session], { encoding: "utf8" });
        frames.push(frame);
        onFrame?.(frame);
        return frame.includes("exit=");
      },
      timeoutMs,
      "the command to finish in tmux",
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the screen last showed:\n${frames.at(-1) ?? ""}`);
    });
    return frames;
  } finally {
    execFileSync("tmux", ["kill-session", "-t", session]);
  }
}
