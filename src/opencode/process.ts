// Starts opencode in its own process group and streams its output. Tools run as opencode's
// children (bash), so every kill here goes to the whole group: when a turn ends, nothing of it
// survives.
import { execa } from "execa";
import type { ProcessEnd } from "../outcome/classify.js";
import type { Invocation } from "./invocation.js";
import { descendantsOf, signalProcess } from "./process-tree.js";

export type RunningProcess = {
  pid: number | undefined;
  /** Resolves when the process has exited and its output streams have closed (or were cut off). */
  done: Promise<ProcessEnd & { spawnError: string | null }>;
  /** Signals opencode's group and every process below it, including those in sessions of their own. */
  killTree(signal: NodeJS.Signals): void;
  /** Stop (true) or resume (false) reading opencode's stdout: flow control for a slow consumer. */
  holdStdout(held: boolean): void;
};

export type StreamHandlers = { stdout(chunk: Buffer): void; stderr(chunk: Buffer): void };

/** After opencode exits, how long a leftover holder of its pipes may keep them open. */
const STREAM_DRAIN_MS = 2000;

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

export function startProcess(invocation: Invocation, handlers: StreamHandlers): RunningProcess {
  const child = execa(invocation.file, invocation.args, {
    env: invocation.env,
    extendEnv: false,
    cwd: invocation.cwd,
    input: invocation.input,
    buffer: false,
    reject: false,
    detached: true, // its own process group, so signals reach the tools it starts
    cleanup: true,
    stripFinalNewline: false,
    windowsHide: true,
  });
  const pid = child.pid;
  // Everything ever seen below opencode; after it exits its orphans can no longer be found by
  // walking the tree, so the final SIGKILL goes to this list too.
  let exit: ProcessEnd | null = null;
  const seen = new Set<number>();
  const killTree = (signal: NodeJS.Signals) => {
    if (pid === undefined) return;
    if (exit === null) for (const p of descendantsOf(pid)) seen.add(p);
    killGroup(pid, signal);
    for (const p of seen) signalProcess(p, signal);
  };
  child.stdout?.on("data", handlers.stdout);
  child.stderr?.on("data", handlers.stderr);
  // A prompt larger than the pipe buffer is still being written when opencode may exit.
  child.stdin?.on("error", () => {});

  const done = new Promise<ProcessEnd & { spawnError: string | null }>((resolve) => {
    const streamsClosed = Promise.all(
      [child.stdout, child.stderr].map((s) =>
        s ? new Promise<void>((r) => (s.closed ? r() : s.once("close", () => r()))) : Promise.resolve(),
      ),
    );
    child.once("exit", (code, signal) => {
      exit = { exitCode: code, signal };
      // Reap whatever the turn left running (a backgrounded tool process), then give the pipes a
      // moment to drain; a grandchild that still holds them open must not hang us.
      killTree("SIGKILL");
      // Output we are holding back for a slow consumer is not a leftover: wait for it.
      const cutIfReading = () => {
        if (child.stdout?.isPaused()) {
          cut = setTimeout(cutIfReading, STREAM_DRAIN_MS);
          return;
        }
        child.stdout?.destroy();
        child.stderr?.destroy();
      };
      let cut = setTimeout(cutIfReading, STREAM_DRAIN_MS);
      void streamsClosed.then(() => {
        clearTimeout(cut);
        resolve({ ...exit!, spawnError: null });
      });
    });
    // Spawn failures (ENOENT, EACCES) never emit "exit"; execa resolves with a failed result.
    void child.then((result) => {
      if (exit === null && result.failed && result.exitCode === undefined && !result.signal) {
        const cause = (result as { cause?: { code?: string; message?: string } }).cause;
        resolve({
          exitCode: null,
          signal: null,
          spawnError: cause?.message ?? result.shortMessage ?? "could not start opencode",
        });
      }
    });
  });

  return {
    pid,
    done,
    killTree,
    holdStdout: (hold) => {
      if (hold) child.stdout?.pause();
      else child.stdout?.resume();
    },
  };
}
