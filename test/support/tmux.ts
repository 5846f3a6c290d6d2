// Runs a shell command in a real terminal (tmux) and collects what the screen showed until the
// command printed "exit=N": how a person sees oc-exec's spinner.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
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
  // A tmux server of its own (-L): on the shared default server, one test's kill-session can end the
  // server just as another test's new-session connects ("server exited unexpectedly"; it failed a
  // CI-like run once). With its own socket, each screen lives and ends alone.
  const tmux = (args: string[], encoding?: "utf8") =>
    execFileSync("tmux", ["-L", session, ...args], encoding ? { encoding } : {});
  // CI services set CI=true, and tmux hands the test's environment on to the command; libraries
  // such as ora change their behaviour on it. Setting it always makes a local run see the terminal
  // a CI run sees (a batch's live line once froze only under CI).
  const envArgs = Object.entries({ CI: "true", ...env }).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  const shell = `${command}; echo "exit=$?"; sleep 30`;
  tmux(["new-session", "-d", "-s", session, "-x", "150", "-y", String(rows), ...envArgs, shell]);
  try {
    const frames: string[] = [];
    await waitFor(
      () => {
        const frame = tmux(["capture-pane", "-p", "-t", session], "utf8") as string;
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
    // Ending its only session ends this private server too; its socket file stays behind otherwise.
    tmux(["kill-session", "-t", session]);
    rmSync(join(process.env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid?.() ?? 0}`, session), { force: true });
  }
}
