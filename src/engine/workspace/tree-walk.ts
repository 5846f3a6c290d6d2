// The workspace's entries, walked on the file system itself (never through git, whose listing the
// agent steers with a .gitignore): the one walk the checks after a sandboxed turn share.
import type { Dirent } from "node:fs";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";

/** Beyond this many entries the walk stops (a workspace that large is not scanned whole). */
const MAX_ENTRIES = 500_000;

/**
 * Calls `visit` with every entry under root (its path relative to root, and the entry), the
 * repository's own .git aside; directories are entered, links never followed.
 */
export function walkWorkspace(root: string, visit: (path: string, entry: Dirent) => void): void {
  let seen = 0;
  const walk = (dir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (++seen > MAX_ENTRIES) return;
      const path = join(dir, entry.name);
      visit(relative(root, path), entry);
      if (entry.isDirectory() && !(dir === root && entry.name === ".git")) walk(path);
    }
  };
  walk(root);
}
