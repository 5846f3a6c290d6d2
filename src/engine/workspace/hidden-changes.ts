// Files a sandboxed turn created or changed where git does not look: under a path a .gitignore
// names (node_modules, .venv, build output) or one the agent named in a .gitignore it wrote. The
// turn's report of changes is git's, so they showed nowhere; yet the job's next steps run them
// outside any sandbox: `npm test` runs node_modules/.bin, `python` a .venv's site-packages. Found by
// the inode's change time (ctime), which every write sets and no process can set back, on the walk
// after the turn.
import type { Dirent } from "node:fs";
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { atMountPoint } from "./agent-files.js";

/**
 * Kernel file times are coarse (a clock tick, up to 10 ms behind the real time): a file written
 * just after the turn began may carry a time just before it. A change in these few milliseconds
 * before the agent started, which nothing of oc-exec's makes in the workspace, counts too.
 */
const CLOCK_SLACK_MS = 20;

/**
 * Collects, on a walk, the entries (not directories) changed since `since` (ms since the epoch). An
 * empty file at one of `mountPoints` is the sandbox's own (it covers a missing path with one at the
 * turn's start), as agent-files.ts reads them too.
 */
export function changedSinceCollector(since: number, mountPoints: readonly string[]) {
  const found: string[] = [];
  const from = since - CLOCK_SLACK_MS;
  return {
    found,
    visit(root: string, path: string, entry: Dirent) {
      if (entry.isDirectory()) return;
      try {
        const stat = lstatSync(join(root, path));
        const sandboxOwn = stat.isFile() && stat.size === 0 && atMountPoint(path, mountPoints);
        if (stat.ctimeMs >= from && !sandboxOwn) found.push(path);
      } catch {
        // gone meanwhile
      }
    },
  };
}

/**
 * The changed entries the turn's report does not show: not among `reported` (git's view of the
 * changes, the agent files named, what oc-exec removed after the turn), nor `skip` (oc-exec's own
 * outputs). Sorted.
 */
export function hiddenChanges(
  changed: readonly string[],
  reported: readonly string[],
  skip: readonly string[],
): string[] {
  const shown = new Set([...reported, ...skip]);
  return changed.filter((path) => !shown.has(path)).sort();
}
