// Process-table helpers for the lifecycle tests: who descends from whom, and who is still alive.
import { readdirSync, readFileSync } from "node:fs";

type Proc = { pid: number; ppid: number; pgid: number; cmdline: string };

function processTable(): Proc[] {
  const out: Proc[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name may contain spaces and parentheses; fields resume after the last ")".
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      out.push({ pid: Number(entry), ppid: Number(fields[1]), pgid: Number(fields[2]), cmdline });
    } catch {
      // gone while we looked
    }
  }
  return out;
}

export function descendants(root: number): Proc[] {
  const table = processTable();
  const found: Proc[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const p of table) {
      if (p.ppid === parent) {
        found.push(p);
        queue.push(p.pid);
      }
    }
  }
  return found;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie is dead for our purposes.
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

export async function waitFor<T>(
  probe: () => T | null | undefined | false,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Peak resident memory (VmHWM) of a process so far, in bytes, or null once it is gone. */
export function peakRss(pid: number): number | null {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * The processes still running with OC_EXEC_TEST_MARK=mark in their environment: what a run started
 * (an agent, its tools), wherever they were reparented once their parent died.
 */
export function marked(mark: string): Proc[] {
  return processTable().filter((p) => {
    try {
      return readFileSync(`/proc/${p.pid}/environ`, "utf8").split("\0").includes(`OC_EXEC_TEST_MARK=${mark}`);
    } catch {
      return false;
    }
  });
}
