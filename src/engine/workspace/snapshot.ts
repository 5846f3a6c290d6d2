// What changed in the workspace during a turn, whoever changed it: the agent's write and edit
// tools, and just as well a command it ran (`echo fixed > fixed.txt`, `eslint --fix`, a formatter).
// In a git work tree the files are listed by git (tracked, and untracked but not ignored) and
// compared by content: a hash taken at the start, so a file already dirty then counts only if the
// turn changed it again. Elsewhere (no git, or a tree too large to hash) the tools' own writes are
// all there is, and the result says so.
//
// git is asked only to list files (ls-files reads the index and .gitignore; it runs no filter, hook
// or fsmonitor), with those switched off on the command line all the same: the agent may have written
// the repository's config during the turn.
import { createHash } from "node:crypto";
import { lstatSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { FileChange } from "../../contract/schema.js";
import { gitLsFiles } from "../../sys/git-list.js";

/** Files larger than this are compared by size and modification time, not read. */
const HASH_MAX_BYTES = 1024 * 1024;
/** Beyond this many files a tree is not hashed at every turn: the tools' writes are reported instead. */
const MAX_FILES = 50_000;

/** A file as it was: its signature, and the stat that lets an unchanged file skip being read again. */
type Seen = { signature: string; stat: string };

export type WorkspaceSnapshot = { dir: string; files: Map<string, Seen> } | { dir: string; skipped: string };

export type WorkspaceChanges = {
  /** git: every file git lists, compared by content; tools: only what the write/edit tools reported. */
  source: "git" | "tools";
  files: FileChange[];
};

/** The files git lists under `dir`, or why they cannot be listed. */
function listFiles(dir: string): string[] | string {
  try {
    return gitLsFiles(dir, { ...process.env, GIT_OPTIONAL_LOCKS: "0" }, { timeoutMs: 30_000 });
  } catch {
    return "not a git work tree (or git is not installed)";
  }
}

/**
 * A file's signature (its content hash, or size and time for a large one) and its stat; null when
 * it is gone. Given the stat seen before, a file whose stat is the same is not read again.
 */
function look(dir: string, path: string, before?: Seen): Seen | null {
  let info: ReturnType<typeof lstatSync>;
  try {
    info = lstatSync(join(dir, path));
  } catch {
    return null;
  }
  const stat = `${info.size}:${info.mtimeMs}:${info.ino}:${info.mode}`;
  if (before && before.stat === stat) return before;
  if (!info.isFile()) return info.isSymbolicLink() ? { signature: `link:${stat}`, stat } : null;
  if (info.size > HASH_MAX_BYTES) return { signature: `large:${stat}`, stat };
  try {
    return {
      signature: createHash("sha1")
        .update(readFileSync(join(dir, path)))
        .digest("hex"),
      stat,
    };
  } catch {
    return { signature: `unreadable:${stat}`, stat };
  }
}

export function takeWorkspaceSnapshot(dir: string): WorkspaceSnapshot {
  const listed = listFiles(dir);
  if (typeof listed === "string") return { dir, skipped: listed };
  if (listed.length > MAX_FILES) return { dir, skipped: `${listed.length} files, more than ${MAX_FILES} to compare` };
  const files = new Map<string, Seen>();
  for (const path of listed) {
    const seen = look(dir, path);
    if (seen !== null) files.set(path, seen);
  }
  return { dir, files };
}

/**
 * What changed since the snapshot; with no git snapshot, the tools' writes. `own`: the files
 * oc-exec itself writes (absolute), never the agent's; `mountPoints`: names where a sandbox left an
 * empty file of its own (hosts/sandbox/policy.ts SANDBOX_MOUNT_POINTS), not the turn's either.
 */
export function workspaceChangesSince(
  snapshot: WorkspaceSnapshot,
  toolWrites: FileChange[],
  own: readonly string[] = [],
  mountPoints: readonly string[] = [],
): WorkspaceChanges {
  // Named as given or where links lead (stdout's file is named by the kernel, links resolved).
  const real = realDir(snapshot.dir);
  const ours = (path: string) => own.includes(join(snapshot.dir, path)) || own.includes(join(real, path));
  if ("skipped" in snapshot)
    return { source: "tools", files: toolWrites.filter((c) => !ours(c.path)).map((c) => ({ ...c })) };
  const listed = listFiles(snapshot.dir);
  const paths = typeof listed === "string" ? [] : listed;
  const changes: FileChange[] = [];
  const seen = new Set<string>();
  const stub = (path: string) =>
    mountPoints.some((m) => path === m || path.endsWith(`/${m}`)) && emptyFile(join(snapshot.dir, path));
  for (const path of paths) {
    seen.add(path);
    if (ours(path)) continue;
    const before = snapshot.files.get(path);
    const now = look(snapshot.dir, path, before);
    if (now === null) {
      if (before !== undefined) changes.push({ path, change: "deleted" });
    } else if (before === undefined) {
      if (!stub(path)) changes.push({ path, change: "added" });
    } else if (before.signature !== now.signature) changes.push({ path, change: "modified" });
  }
  for (const path of snapshot.files.keys())
    if (!seen.has(path) && look(snapshot.dir, path) === null) changes.push({ path, change: "deleted" });
  changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { source: "git", files: changes };
}

function emptyFile(path: string): boolean {
  try {
    const stat = lstatSync(path);
    return stat.isFile() && stat.size === 0;
  } catch {
    return false;
  }
}

function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}
