// Two oc-exec processes that start at the same moment and find nothing warm that fits must not
// both start one: a lock file per key (in the registry's directory, readable by the user only) lets
// one start it while the others wait and look again. A lock whose holder died is taken over.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "../../sys/pids.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What fits (`find`), else what `start` starts under the lock for `key`; or why there is neither
 * (the starter failed, or another process held the lock past `waitMs`).
 */
export async function findOrStart<T>(
  dir: string,
  key: string,
  waitMs: number,
  find: () => Promise<T | null> | T | null,
  start: () => Promise<T | { problem: string }>,
): Promise<T | { problem: string }> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = join(dir, `warm-${key}.lock`);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const found = await find();
    if (found !== null) return found;
    let fd: number;
    try {
      fd = openSync(lock, "wx", 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      // Another oc-exec is starting it: wait for it, unless that process died meanwhile.
      const holder = Number(readFileSync(lock, { encoding: "utf8", flag: "r" }).trim() || "0");
      if (holder > 0 && !isAlive(holder)) rmSync(lock, { force: true });
      else if (Date.now() > deadline) return { problem: "another oc-exec was starting it and did not finish in time" };
      await sleep(100);
      continue;
    }
    try {
      writeSync(fd, String(process.pid));
      closeSync(fd);
      const meanwhile = await find();
      if (meanwhile !== null) return meanwhile;
      return await start();
    } catch (error) {
      return { problem: error instanceof Error ? error.message : String(error) };
    } finally {
      rmSync(lock, { force: true });
    }
  }
}
