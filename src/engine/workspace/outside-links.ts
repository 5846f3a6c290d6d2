// Symbolic links a sandboxed turn left in the workspace that lead out of it. Making one is allowed
// inside the sandbox (a link is only a name), but the job's next steps run outside it: `zip -r`, an
// artifact upload or a cache save follow the link and pack what it points at (~/.ssh, a credentials
// file) that the sandbox hid from the agent. Links that were there before the turn are the
// caller's; the turn's own that lead outside are removed after it, and named. So are the named
// pipes and sockets the turn left: a later step that reads every file (`cat *`, `tar`, a linter,
// `grep -r`) would wait on one for ever, and neither git nor a patch shows them.
import { type Dirent, lstatSync, readlinkSync, unlinkSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/**
 * Every symbolic link under root (its path relative to root, and its target as written), and every
 * named pipe or socket (target SPECIAL); .git aside. Gathered by the workspace's one walk (survey.ts).
 */
export type Links = Map<string, string>;

const SPECIAL = "\0special";

/** The links' collector for one walk of the workspace (survey.ts). */
export function linkCollector() {
  const found: Links = new Map();
  return {
    found,
    visit(root: string, path: string, entry: Dirent): void {
      if (entry.isSymbolicLink()) {
        try {
          found.set(path, readlinkSync(join(root, path)));
        } catch {
          // Gone already.
        }
      } else if (entry.isFIFO() || entry.isSocket()) found.set(path, SPECIAL);
    },
  };
}

const within = (inner: string, outer: string) => {
  const rel = relative(outer, inner);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep));
};

/**
 * The links made or changed between `before` and `now` whose target lies outside root, removed. Returns what
 * was removed ({path, target}); a link that cannot be removed is still returned, with removed false.
 */
export function removeOutsideLinks(
  root: string,
  before: Links,
  now: Links,
): { path: string; target: string; removed: boolean }[] {
  const found: { path: string; target: string; removed: boolean }[] = [];
  for (const [path, target] of now) {
    if (before.get(path) === target || target === SPECIAL) continue;
    const abs = join(root, path);
    if (within(resolve(dirname(abs), target), root)) continue;
    let removed = false;
    try {
      if (lstatSync(abs).isSymbolicLink()) {
        unlinkSync(abs);
        removed = true;
      }
    } catch {
      // Left as it is; said as not removed.
    }
    found.push({ path, target, removed });
  }
  return found;
}

/** The named pipes and sockets in `now` that were not there before the turn, removed ({path, removed}). */
export function removeSpecialFiles(root: string, before: Links, now: Links): { path: string; removed: boolean }[] {
  const found: { path: string; removed: boolean }[] = [];
  for (const [path, target] of now) {
    if (target !== SPECIAL || before.get(path) === SPECIAL) continue;
    let removed = false;
    try {
      const stat = lstatSync(join(root, path));
      if (stat.isFIFO() || stat.isSocket()) {
        unlinkSync(join(root, path));
        removed = true;
      }
    } catch {
      // Left as it is; said as not removed.
    }
    found.push({ path, removed });
  }
  return found;
}
