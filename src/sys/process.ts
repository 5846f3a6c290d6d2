// Starts a command (opencode, ssh, a --verify check) in its own process group and streams its
// output. Tools run as opencode's children (bash), so every kill here goes to the whole group: when
// a turn ends, nothing of it survives.
import { spawn } from "node:child_process";
import { guardMark } from "./orphan-guard.js";
import { descendantsOf, signalProcess } from "./process-tree.js";

/** A command to run: what opencode's invocation (domain/opencode/invocation.ts) is built as. */
export type Command = { file: string; args: string[]; env: Record<string, string>; input: string; cwd: string };

/** How a process ended. */
export type ProcessEnd = { exitCode: number | null; signal: string | null };

export type RunningProcess = {
  pid: number | undefined;
  /** Resolves when the process has exited and its output streams have closed (or were cut off). */
  done: Promise<ProcessEnd & { spawnError: string | null }>;
  /** Signals opencode's group and every process below it, including those in sessions of their own. */
  killTree(signal: NodeJS.Signals): void;
  /**
   * The one graceful stop: SIGTERM to the tree now (or, with `term: false`, leave the ending to the
   * caller, as ssh does by closing stdin), SIGKILL after `graceMs` if it still runs; `force` kills
   * at once. Asking again only shortens the wait.
   */
  stop(how: { graceMs: number; force?: boolean; term?: boolean }): void;
  /** Stop (true) or resume (false) reading opencode's stdout: flow control for a slow consumer. */
  holdStdout(held: boolean): void;
  /** Closes the child's stdin, when it was kept open after the input (keepInputOpen). */
  endInput(): void;
  /** Writes more to the child's stdin, kept open (keepInputOpen): a protocol spoken over it (ACP). */
  write(chunk: Uint8Array | string): void;
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

/** opencode processes still running; one exit hook for all of them, however many turns run at once. */
const running = new Set<number>();
process.once("exit", () => {
  for (const pid of running) killGroup(pid, "SIGKILL");
});

export function startProcess(
  invocation: Command,
  handlers: StreamHandlers,
  /** Keep stdin open after the input, until endInput(): over ssh, its end is what stops the turn. */
  options: { keepInputOpen?: boolean } = {},
): RunningProcess {
  // node:child_process, not execa: the turn's one process needs none of execa's conveniences, and
  // loading execa (164 KB of the bundle) before the spawn cost every turn its start-up time.
  const child = spawn(invocation.file, invocation.args, {
    // Marked, so that a watcher ends it and its tools if oc-exec is killed outright (orphan-guard.ts).
    env: { ...invocation.env, ...guardMark() },
    cwd: invocation.cwd,
    detached: true, // its own process group, so signals reach the tools it starts
    stdio: ["pipe", "pipe", "pipe"],
    windowsHide: true,
  });
  const pid = child.pid;
  // If oc-exec itself exits while opencode runs, the turn's processes go with it.
  const cleanup = () => pid !== undefined && running.delete(pid);
  if (pid !== undefined) running.add(pid);
  // A prompt larger than the pipe buffer is still being written when opencode may exit.
  child.stdin.on("error", () => {});
  if (options.keepInputOpen) child.stdin.write(invocation.input);
  else child.stdin.end(invocation.input);
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

  const done = new Promise<ProcessEnd & { spawnError: string | null }>((resolve) => {
    const streamsClosed = Promise.all(
      [child.stdout, child.stderr].map((s) =>
        s ? new Promise<void>((r) => (s.closed ? r() : s.once("close", () => r()))) : Promise.resolve(),
      ),
    );
    child.once("exit", (code, signal) => {
      cleanup();
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
    // Spawn failures (ENOENT, EACCES) never emit "exit".
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (exit !== null) return;
      cleanup();
      resolve({ exitCode: null, signal: null, spawnError: error.message || "could not start opencode" });
    });
  });

  let killTimer: NodeJS.Timeout | null = null;
  const stop = (how: { graceMs: number; force?: boolean; term?: boolean }) => {
    if (how.force) return killTree("SIGKILL");
    if (how.term !== false) killTree("SIGTERM");
    killTimer ??= setTimeout(() => killTree("SIGKILL"), how.graceMs);
  };
  void done.then(() => killTimer && clearTimeout(killTimer));

  return {
    pid,
    done,
    killTree,
    stop,
    endInput: () => child.stdin.end(),
    write: (chunk) => {
      if (child.stdin.writable) child.stdin.write(chunk);
    },
    holdStdout: (hold) => {
      if (hold) child.stdout?.pause();
      else child.stdout?.resume();
    },
  };
}
