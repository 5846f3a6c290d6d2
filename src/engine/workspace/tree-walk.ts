// The workspace's entries, walked on the file system itself (never through git, whose listing the
// agent steers with a .gitignore): the one walk the checks after a sandboxed turn share. Whole,
// however large: a walk that stopped after 500,000 entries let an agent hide a link to ~/.ssh
// behind as many empty files (12 s to make here; the walk takes about 2.5 µs an entry, less than
// making one cost the agent).
import type { Dirent } from "node:fs";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * Calls `visit` with every entry under root (its path relative to root, and the entry), the
 * repository's own .git aside; directories are entered, links never followed.
 */
export function walkWorkspace(root: string, visit: (path: string, entry: Dirent) => void): void {
  const walk = (dir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      visit(relative(root, path), entry);
      if (entry.isDirectory() && !(dir === root && entry.name === ".git")) walk(path);
    }
  };
  walk(root);
}
