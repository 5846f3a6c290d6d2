// opencode's configuration in the workspace that a sandboxed turn created, changed or removed:
// opencode.json(c) anywhere, and all under a .opencode directory. The next opencode started there,
// outside any sandbox too, reads it (an MCP server's command runs at its start). Read from the file
// system itself, before and after the turn: git's listing would miss a file the agent also named in
// a .gitignore it wrote, and a workspace outside git would show only the tools' own writes.
import { lstatSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { walkWorkspace } from "./tree-walk.js";

/** Each configuration entry's path (relative to the workspace) and what it is now. */
export type OpencodeConfig = Map<string, string>;

const CONFIG_FILE = /^opencode\.jsonc?$/;

/** Whether a path is opencode's configuration: opencode.json(c), or under (or itself) a .opencode. */
const isConfig = (path: string) => {
  const parts = path.split("/");
  return CONFIG_FILE.test(parts.at(-1)!) || parts.includes(".opencode");
};

/**
 * What an entry is: a link's target, a file's size and times (its ctime changes at every write,
 * and no process can set it back), so nothing is read.
 */
function signature(path: string): string | null {
  try {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return `link:${readlinkSync(path)}`;
    return `${stat.mode}:${stat.size}:${stat.ino}:${stat.mtimeMs}:${stat.ctimeMs}`;
  } catch {
    return null;
  }
}

export function opencodeConfigIn(root: string): OpencodeConfig {
  const found: OpencodeConfig = new Map();
  walkWorkspace(root, (path, entry) => {
    if (entry.isDirectory() || !isConfig(path)) return;
    const seen = signature(join(root, path));
    if (seen !== null) found.set(path, seen);
  });
  return found;
}

/** The configuration entries made, changed or removed since `before`, sorted. */
export function opencodeConfigChangedSince(root: string, before: OpencodeConfig): string[] {
  const now = opencodeConfigIn(root);
  const changed = [...now].filter(([path, seen]) => before.get(path) !== seen).map(([path]) => path);
  const removed = [...before.keys()].filter((path) => !now.has(path));
  return [...changed, ...removed].sort();
}
