// When oc-exec dies by any means that runs no code of ours (kill -9, the OOM killer, a CI runner's
// hard kill, a pod eviction), what it started must not live on and keep paying the model. opencode
// runs in a process group of its own (so signals reach its tools) and its tools in sessions of
// their own, so nothing in the kernel ends them with us. A watcher does: one small shell per oc-exec
// process, started at the first spawn, blocked reading a pipe only oc-exec holds. When oc-exec is
// gone, for whatever reason, the pipe closes and the watcher kills every process that carries this
// run's mark in its environment (opencode and the tools inherit it; the watcher itself does not),
// twice, for what was being started meanwhile. At a normal exit it finds nothing left.
// Linux only (/proc); a sandboxed turn has bubblewrap's --die-with-parent as well.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";

const GUARD_VARIABLE = "OC_EXEC_GUARD";

// One grep over every process's environment (not one per process: this runs after every oc-exec).
const WATCHER = `read -r _
for round in 1 2; do
  for f in $(grep -lsxzF "${GUARD_VARIABLE}=$1" /proc/[0-9]*/environ); do
    p=\${f#/proc/}
    kill -KILL "\${p%/environ}" 2>/dev/null
  done
  sleep 0.2
done`;

let mark: string | null = null;
/** Held for the life of the process: the pipe to the watcher must never be collected and closed. */
let watcher: ChildProcess | null = null;

/** The variable and value every process this oc-exec starts carries; starts the watcher once. */
export function guardMark(): Record<string, string> {
  if (process.platform !== "linux") return {};
  if (mark === null) {
    mark = randomUUID();
    // After the spawn that asked for the mark, off the path to opencode's start.
    setImmediate(startWatcher, mark);
  }
  return { [GUARD_VARIABLE]: mark };
}

/** An environment without any oc-exec process's mark: for what must outlive its starter (a server's supervisor). */
export function withoutGuardMark(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { [GUARD_VARIABLE]: _mark, ...rest } = env;
  return rest;
}

function startWatcher(value: string): void {
  try {
    watcher = spawn("/bin/sh", ["-c", WATCHER, "oc-exec-guard", value], {
      // Its own session: a Ctrl-C to our group must not end it before it has looked.
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    watcher.on("error", () => {});
    watcher.stdin?.on("error", () => {});
    // Held open, never written: it must not keep oc-exec's event loop alive.
    (watcher.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    watcher.unref();
  } catch {
    // No shell: nothing watches, as before.
  }
}
