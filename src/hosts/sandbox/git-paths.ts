// The parts of a git repository that run code when git runs later, outside any sandbox: all of
// `.git` (a copied repository named in `commondir` brings its own config with core.fsmonitor, its
// own hooks), a worktree's or submodule's `.git` file and the directories it names, and the
// directory `core.hooksPath` names when it lies in the work tree (husky's `.husky/_`). Pure: the
// reads are passed in.
import { dirname, isAbsolute, join, resolve } from "node:path";

export type GitReads = {
  exists: (path: string) => boolean;
  /** A file's text, or null when it is not a readable file (a directory, missing). */
  read: (path: string) => string | null;
  /**
   * The submodules (gitlinks) of the index of the repository the workspace lies in, relative to
   * the workspace: the top's `git status` and `git diff` enter each populated one and run git there,
   * with that repository's config (core.fsmonitor).
   */
  gitlinks?: () => string[];
};

/** `core.hooksPath` of a git config file's text, when set. */
export function hooksPathOf(config: string): string | null {
  let section = "";
  let found: string | null = null;
  for (const line of config.split("\n")) {
    const header = /^\s*\[([^\]]+)\]/.exec(line);
    if (header) section = header[1]!.trim().toLowerCase();
    const entry = /^\s*hookspath\s*=\s*(.*?)\s*$/i.exec(line);
    if (section === "core" && entry) found = entry[1]!.replace(/^"(.*)"$/, "$1");
  }
  return found;
}

/**
 * What a sandboxed turn must not write in the repository around `workspace` (when there is one at
 * its root): `.git` as a whole, or, with `gitWritable` (--writable .git: an agent that commits),
 * still its hooks and config; the directories a `.git` file names; an in-tree hooks directory.
 */
export function gitProtectedPaths(workspace: string, reads: GitReads, gitWritable = false): string[] {
  return [...new Set([...repositoryPaths(workspace, reads, gitWritable), ...submodulePaths(workspace, reads)])];
}

/**
 * Each submodule's `.git` (kept from being made where the submodule was never initialised: an
 * empty directory, as actions/checkout leaves it; read-only where it is a file naming
 * `.git/modules/...`) and the git directory it names: a repository the agent made there, or put in
 * place of the `.git` file, would run its core.fsmonitor at the job's next `git status`.
 */
function submodulePaths(workspace: string, reads: GitReads): string[] {
  const paths: string[] = [];
  for (const link of reads.gitlinks?.() ?? []) {
    const dotGit = resolve(workspace, link, ".git");
    if (!dotGit.startsWith(`${workspace}/`)) continue;
    paths.push(dotGit);
    const named = /^gitdir:\s*(.+?)\s*$/m.exec(reads.read(dotGit) ?? "")?.[1];
    if (named) {
      const gitDir = resolve(dirname(dotGit), named);
      if (reads.exists(gitDir)) paths.push(gitDir);
    }
  }
  return paths;
}

function repositoryPaths(workspace: string, reads: GitReads, gitWritable: boolean): string[] {
  const dotGit = join(workspace, ".git");
  // No repository here or above (a tarball's tree, a fresh directory): the agent could make one
  // (`git init`, then core.fsmonitor in its config) that the job's next `git add` or `git status`
  // runs outside. `.git` is kept from being made: the library covers a missing path. Under a
  // repository's subdirectory a `.git` the agent made is a nested repository the top's git
  // commands do not enter, and covering it would break git inside the sandbox; a submodule's,
  // which they do enter, is submodulePaths' to keep.
  if (!reads.exists(dotGit)) return gitwardUp(workspace, reads) ? [] : [dotGit];
  const paths: string[] = [];
  const file = reads.read(dotGit);
  // A worktree or a submodule: `.git` is a file that names the git directory, whose `commondir`
  // names the repository's own.
  const gitDirs = [dotGit];
  const named = file === null ? null : /^gitdir:\s*(.+?)\s*$/m.exec(file)?.[1];
  if (named) {
    const gitDir = resolve(workspace, named);
    gitDirs.push(gitDir);
    const common = reads.read(join(gitDir, "commondir"))?.trim();
    if (common) gitDirs.push(resolve(gitDir, common));
  }
  for (const dir of gitDirs) {
    if (dir !== dotGit && !reads.exists(dir)) continue;
    if (gitWritable && dir === dotGit && file === null) paths.push(join(dir, "hooks"), join(dir, "config"));
    else paths.push(dir);
  }
  // core.hooksPath, relative to the work tree's top, when it points inside it.
  for (const dir of gitDirs) {
    const hooks = hooksPathOf(reads.read(join(dir, "config")) ?? "");
    if (!hooks || hooks.startsWith("~")) continue;
    const path = isAbsolute(hooks) ? hooks : resolve(workspace, hooks);
    if (path.startsWith(`${workspace}/`)) paths.push(path);
  }
  return paths;
}

/** Whether a directory above the workspace holds a `.git` (the workspace lies in a repository). */
function gitwardUp(workspace: string, reads: GitReads): boolean {
  for (let dir = dirname(workspace); ; dir = dirname(dir)) {
    if (reads.exists(join(dir, ".git"))) return true;
    if (dirname(dir) === dir) return false;
  }
}
