// --output-patch: the turn's workspace changes as a git patch, made outside the sandbox after the
// turn without running anything the agent could have planted.
//
// Before the turn (takePatchBase) oc-exec copies what the workspace holds into a private
// directory: every file git lists under the workspace (tracked, or untracked and not ignored), and
// a git directory of its own holding a copy of the repository's index and info/exclude. After the
// turn (turnPatch) the same listing is made again with that private git directory, in a neutral
// environment (no system or global config, no attributes, no fsmonitor, no hooks): git only lists
// names there, from the index copied before the turn and the work tree's .gitignore files. The
// workspace's own .git (config, hooks, index, objects), which the agent may have written, is never
// read after the turn, and no git diff runs: the patch is written by git-patch.ts from the copies
// and the files as they are now, so no diff driver, textconv or filter of .gitattributes can run.
//
// A file is read without following links: a link is patched as a link (its target), a path through
// a directory the agent replaced by a link is not read (that would put files from outside the
// workspace into the patch), and nothing but regular files and links is opened (a FIFO would hang).
import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  copyFileSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join, resolve, sep } from "node:path";
import { gitLsFiles, NO_REPO_CODE } from "../../sys/git-list.js";
import { ownTempDir } from "../../sys/own-temp.js";
import { filePatch, type Side } from "./git-patch.js";

type Kept = { mode: Side["mode"]; copy: string } | { mode: "120000"; target: string };

/**
 * How much more the files read after the turn may hold than the copies taken before it. A sparse
 * file costs the agent nothing (`truncate -s 1900M big.bin`), but reading, hashing and compressing
 * it took oc-exec ~10 s and 4 GB here, and a thousand of them hours of the job and a patch of
 * gigabytes: beyond this the patch is not made (output_patch_failed), never cut short.
 */
const PATCH_GROWTH_MAX_BYTES = 256 * 1024 * 1024;

export type PatchBase = {
  /** The repository's top level: patch paths are relative to it, as git apply wants them. */
  top: string;
  /** The workspace (where the listing is made: only files under it are patched). */
  dir: string;
  /** oc-exec's private directory: git/ (its own git directory) and the copies. */
  temp: string;
  /** Absolute paths never put in the patch: the patch file itself, -o, --junit. */
  exclude: Set<string>;
  files: Map<string, Kept>;
  /** What the copies hold, in bytes. */
  bytes: number;
};

export type TurnPatch = { text: Buffer; files: number };

/** The workspace before the turn, or why no patch can be made (not a git work tree). */
export function takePatchBase(dir: string, exclude: string[]): PatchBase | { problem: string } {
  const where = locateRepository(dir);
  if ("problem" in where) return where;
  const temp = ownTempDir("patch");
  try {
    const gitDir = join(temp, "git");
    makePrivateGitDir(gitDir, where.gitDir, where.commonDir);
    const base: PatchBase = {
      top: where.top,
      dir,
      temp,
      exclude: new Set(exclude.map((p) => resolve(p))),
      files: new Map(),
      bytes: 0,
    };
    let n = 0;
    for (const path of listFiles(base)) {
      const read = readSide(base.top, path);
      if (read === null) continue;
      if (read.mode === "120000") base.files.set(path, { mode: "120000", target: read.data.toString("latin1") });
      else {
        const copy = join(temp, `f${n++}`);
        writeFileSync(copy, read.data, { flag: "wx", mode: 0o600 });
        base.bytes += read.data.length;
        base.files.set(path, { mode: read.mode, copy });
      }
    }
    return base;
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    return { problem: `could not copy the workspace before the turn: ${(error as Error).message}` };
  }
}

/**
 * The patch from the base to the workspace as it is now. `mountPoints`: names (a path's last
 * components) where a sandbox leaves empty files of its own; a new empty file there is not the turn's.
 */
export function turnPatch(base: PatchBase, mountPoints: readonly string[] = []): TurnPatch {
  const now = new Set(listFiles(base));
  const paths = [...new Set([...base.files.keys(), ...now])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const parts: string[] = [];
  const room = { left: base.bytes + PATCH_GROWTH_MAX_BYTES };
  for (const path of paths) {
    const kept = base.files.get(path);
    const before: Side | null = kept
      ? { mode: kept.mode, data: "copy" in kept ? readFileSync(kept.copy) : Buffer.from(kept.target, "latin1") }
      : null;
    const after = now.has(path) || kept ? readSide(base.top, path, room) : null;
    if (!kept && after?.data.length === 0 && mountPoints.some((m) => path === m || path.endsWith(`/${m}`))) continue;
    const part = filePatch(path, before, after);
    if (part !== "") parts.push(part);
  }
  return { text: Buffer.from(parts.join(""), "latin1"), files: parts.length };
}

export function dropPatchBase(base: PatchBase): void {
  rmSync(base.temp, { recursive: true, force: true });
}

/** A clean environment for git: nothing from the caller's environment, config or attributes. */
function neutralEnv(temp: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: temp,
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_OPTIONAL_LOCKS: "0",
  };
}

/** A private git directory of the turn's own: any owner is fine. */
const NO_CODE = [...NO_REPO_CODE, "-c", "safe.directory=*"];

/**
 * The repository's top level and the files its index lives in, asked before the turn (the
 * workspace's git is what the user checked out then; the existing workspace_changes listing asks it
 * the same way).
 */
function locateRepository(dir: string): { top: string; gitDir: string; commonDir: string } | { problem: string } {
  try {
    const out = execFileSync(
      "git",
      [...NO_CODE, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir"],
      {
        cwd: dir,
        env: { ...neutralEnv(dir), HOME: process.env.HOME },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 30_000,
      },
    )
      .toString("utf8")
      .split("\n");
    const [top, gitDir, commonDir] = out;
    if (!top || !gitDir || !commonDir) return { problem: `${dir} is not in a git work tree` };
    return { top, gitDir, commonDir };
  } catch {
    return { problem: `${dir} is not in a git work tree (or git is not installed): a patch needs one` };
  }
}

/** A git directory of oc-exec's own: the repository's index and info/exclude as they are now. */
function makePrivateGitDir(to: string, gitDir: string, commonDir: string): void {
  mkdirSync(join(to, "objects"), { recursive: true });
  mkdirSync(join(to, "refs"), { recursive: true });
  mkdirSync(join(to, "info"), { recursive: true });
  writeFileSync(join(to, "HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(to, "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n");
  const copyIfThere = (from: string, name: string) => {
    try {
      copyFileSync(from, join(to, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  };
  copyIfThere(join(gitDir, "index"), "index");
  copyIfThere(join(commonDir, "info", "exclude"), join("info", "exclude"));
}

/** Paths relative to the top level, under the workspace, without .git and oc-exec's own files. */
function listFiles(base: PatchBase): string[] {
  return gitLsFiles(
    base.dir,
    { ...neutralEnv(base.temp), GIT_DIR: join(base.temp, "git"), GIT_WORK_TREE: base.top },
    { before: ["-c", "safe.directory=*"], extra: ["--full-name"], timeoutMs: 60_000 },
  )
    .filter((p) => !p.endsWith("/"))
    .filter((p) => !p.split("/").some((part) => part.toLowerCase() === ".git"))
    .filter((p) => !base.exclude.has(join(base.top, p)));
}

/**
 * The file at `path` (relative to `top`) as a patch side, or null when there is none to patch: gone,
 * a directory, a FIFO or device, or reached through a link (any directory on the way that is a link).
 * With `room`, a file larger than what is left of it is not read: the patch is refused (an error).
 */
function readSide(top: string, path: string, room?: { left: number }): Side | null {
  const parts = path.split("/");
  let at = top;
  for (const part of parts.slice(0, -1)) {
    at = join(at, part);
    try {
      if (!lstatSync(at).isDirectory()) return null;
    } catch {
      return null;
    }
  }
  const full = join(top, ...parts);
  if (!full.startsWith(top + sep)) return null;
  let info: ReturnType<typeof lstatSync>;
  try {
    info = lstatSync(full);
  } catch {
    return null;
  }
  if (info.isSymbolicLink()) return { mode: "120000", data: Buffer.from(readlinkSync(full, { encoding: "buffer" })) };
  if (!info.isFile()) return null;
  let fd: number;
  try {
    fd = openSync(full, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile()) return null;
    if (room) {
      if (opened.size > room.left)
        throw new Error(
          `the workspace's files hold more than ${PATCH_GROWTH_MAX_BYTES / 1024 / 1024} MiB beyond what they held before the turn (${path} is ${opened.size} bytes): too large for a patch`,
        );
      room.left -= opened.size;
    }
    return { mode: opened.mode & 0o100 ? "100755" : "100644", data: readFileSync(fd) };
  } finally {
    closeSync(fd);
  }
}
