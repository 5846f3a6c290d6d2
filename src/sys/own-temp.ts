// Temporary directories named for the process that made them: `oc-exec-KIND-<pid>-XXXXXX`. A
// process killed outright (SIGKILL, the OOM killer) cannot remove its own, so each new one first
// removes those, of every kind, whose process is gone.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAlive } from "./pids.js";

const KINDS = ["ssh", "sandbox", "guard", "opencode", "patch"] as const;
const OURS = new RegExp(`^oc-exec-(?:${KINDS.join("|")})-(\\d+)-`);

export function ownTempDir(kind: (typeof KINDS)[number], root = tmpdir()): string {
  try {
    for (const name of readdirSync(root)) {
      const pid = OURS.exec(name)?.[1];
      if (pid && !isAlive(Number(pid))) rmSync(join(root, name), { recursive: true, force: true });
    }
  } catch {
    // An unreadable temporary directory: nothing to sweep.
  }
  return mkdtempSync(join(root, `oc-exec-${kind}-${process.pid}-`));
}
