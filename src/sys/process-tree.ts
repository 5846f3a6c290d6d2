// The processes a turn started. opencode runs in its own process group, but its bash tool starts
// commands in new sessions of their own (a `sleep 300` survived a group kill in 1.18.33), so a
// stop also walks the process tree below opencode while it is still there to walk.
import { readdirSync, readFileSync } from "node:fs";
import { isAlive } from "./pids.js";

function parentOf(pid: string): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses; the fields resume after the last ")".
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/** Every live descendant of root (Linux /proc; elsewhere an empty list, and the group kill remains). */
export function descendantsOf(root: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    const ppid = parentOf(entry);
    if (ppid === null) continue;
    const list = children.get(ppid);
    if (list) list.push(Number(entry));
    else children.set(ppid, [Number(entry)]);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/** Signals a process and the group it may lead; errors (already gone) are expected. */
export function signalProcess(pid: number, signal: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
    } catch {
      // ESRCH / EPERM: nothing to do
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Signals opencode, its group, and every process below it (tools may run in sessions of their own). */
function stopTree(pid: number, signal: NodeJS.Signals): number[] {
  const below = descendantsOf(pid);
  signalProcess(pid, signal);
  for (const child of below) signalProcess(child, signal);
  return below;
}

/**
 * The graceful stop of a process that is not our child (a server's opencode, found by its pid):
 * SIGTERM to the tree, then SIGKILL to whatever is left after the grace period; resolves when gone.
 */
export async function stopProcessTree(pid: number, graceMs: number): Promise<void> {
  const seen = new Set([pid, ...stopTree(pid, "SIGTERM")]);
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && [...seen].some(isAlive)) await sleep(50);
  for (const p of seen) if (isAlive(p)) signalProcess(p, "SIGKILL");
  for (const child of descendantsOf(pid)) signalProcess(child, "SIGKILL");
  const hard = Date.now() + graceMs;
  while (Date.now() < hard && [...seen].some(isAlive)) await sleep(50);
}
