// Files a sandboxed turn created or changed where git does not look: under a path a .gitignore
// names (node_modules, .venv, build output) or one the agent named in a .gitignore it wrote. The
// turn's report of changes is git's, so they showed nowhere; yet the job's next steps run them
// outside any sandbox: `npm test` runs node_modules/.bin, `python` a .venv's site-packages. Found by
// the inode's change time (ctime), which every write sets and no process can set back, on the walk
// after the turn. A directory moved in keeps its files' change times (a rename sets only the moved
// directory's): `rm -rf node_modules/.bin && mv dist/bin node_modules/.bin` swaps in what an ignored
// build left, every file of it old. So a directory that is not the one that stood at its path before
// the turn (another inode, or none there) and holds such older content is named too, with a `/`.
import type { Dirent } from "node:fs";
import { lstatSync } from "node:fs";
import { dirname, join } from "node:path";
import { atMountPoint } from "./agent-files.js";

/** The workspace's directories before the turn, by path: their inodes. */
export type DirInodes = Map<string, number>;

/** Collects, on the walk before the turn, every directory's inode. */
export function dirInodeCollector() {
  const found: DirInodes = new Map();
  return {
    found,
    visit(root: string, path: string, entry: Dirent) {
      if (!entry.isDirectory()) return;
      try {
        found.set(path, lstatSync(join(root, path)).ino);
      } catch {
        // gone meanwhile
      }
    },
  };
}

/** An entry older than the turn found under a directory the turn put in place: the topmost such directory. */
export type MovedIn = { path: string; dir: string };

/**
 * Kernel file times are coarse (a clock tick, up to 10 ms behind the real time): a file written
 * just after the turn began may carry a time just before it. A change in these few milliseconds
 * before the agent started, which nothing of oc-exec's makes in the workspace, counts too.
 */
const CLOCK_SLACK_MS = 20;

/**
 * Collects, on a walk, the entries (not directories) changed since `since` (ms since the epoch). An
 * empty file at one of `mountPoints` is the sandbox's own (it covers a missing path with one at the
 * turn's start), as agent-files.ts reads them too. With the directories of the walk before the turn
 * (`before`), also the older entries under a directory the turn put in place (`movedIn`).
 */
export function changedSinceCollector(since: number, mountPoints: readonly string[], before?: DirInodes) {
  const found: string[] = [];
  const movedIn: MovedIn[] = [];
  // For each directory walked, the topmost directory at or above it that the turn put in place.
  // The walk visits a directory before what it holds, so a lookup of the parent is enough.
  const placed = new Map<string, string | null>();
  const from = since - CLOCK_SLACK_MS;
  return {
    found,
    movedIn,
    visit(root: string, path: string, entry: Dirent) {
      const parent = dirname(path);
      const above = parent === "." ? null : (placed.get(parent) ?? null);
      try {
        const stat = lstatSync(join(root, path));
        if (entry.isDirectory()) {
          if (before) placed.set(path, above ?? (before.get(path) === stat.ino ? null : path));
          return;
        }
        const sandboxOwn = stat.isFile() && stat.size === 0 && atMountPoint(path, mountPoints);
        if (stat.ctimeMs >= from) {
          if (!sandboxOwn) found.push(path);
        } else if (above !== null) movedIn.push({ path, dir: above });
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
  movedIn: readonly MovedIn[] = [],
): string[] {
  const shown = new Set([...reported, ...skip]);
  // A directory moved in whose every older entry the report shows (git lists a tracked directory
  // renamed) is not hidden; one it does not show is named once, as a directory.
  const dirs = new Set(movedIn.filter((m) => !shown.has(m.path)).map((m) => `${m.dir}/`));
  return [...changed.filter((path) => !shown.has(path)), ...dirs].sort();
}
