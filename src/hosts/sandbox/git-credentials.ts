// The token actions/checkout leaves in the repository's .git/config (persist-credentials, its
// default): `http.https://github.com/.extraheader = AUTHORIZATION: basic …`, and the userinfo a
// remote URL may carry (https://x-access-token:TOKEN@github.com/…). The sandbox shows the agent a
// copy of that file with each of these values replaced by a stand-in (the library's masked file,
// bound read-only over it), sent to no host: git still reads a valid config, the token stays out.
// Files the config includes (newer actions/checkout keep the header in one under RUNNER_TEMP) are
// hidden. Pure but for the reader it is given.
import { dirname, isAbsolute, join, resolve } from "node:path";

/**
 * Group 1 is the secret: the value of an extraheader after its header name and auth scheme, or the
 * userinfo of a URL.
 */
export const GIT_CREDENTIAL =
  "(?:extra[Hh]eader[ \\t]*=[ \\t]*(?:[\\w-]+:[ \\t]*)?(?:(?:[Bb]asic|[Bb]earer|token)[ \\t]+)?|://(?=[^\\s/@]+@))([^\\s/@]+(?=@)|[^\\r\\n]+)";

/** file: the config to mask (null: it holds no credential itself); includes: files to hide. */
export type GitConfigCredentials = { file: string | null; includes: string[] };

/** The repository's config file above `workspace`, and what it includes, when it holds a credential. */
export function gitConfigCredentials(
  workspace: string,
  read: (path: string) => string | null,
  isDir: (path: string) => boolean,
): GitConfigCredentials | null {
  const file = gitConfigFile(workspace, read, isDir);
  if (!file) return null;
  const text = read(file);
  if (text === null) return null;
  const includes = [...text.matchAll(/^[ \t]*path[ \t]*=[ \t]*(.+?)[ \t]*$/gim)]
    .map((m) => m[1]!.replace(/^"(.*)"$/, "$1"))
    .map((p) => (isAbsolute(p) ? p : resolve(dirname(file), p)));
  const credential = new RegExp(GIT_CREDENTIAL).test(text);
  return credential || includes.length > 0 ? { file: credential ? file : null, includes } : null;
}

/** .git/config of the repository the workspace is in (a worktree's: its common directory's). */
function gitConfigFile(
  workspace: string,
  read: (path: string) => string | null,
  isDir: (path: string) => boolean,
): string | null {
  for (let dir = workspace; ; dir = dirname(dir)) {
    const dotGit = join(dir, ".git");
    if (isDir(dotGit)) return join(dotGit, "config");
    const pointer = read(dotGit);
    const gitdir = pointer && /^gitdir:\s*(.+?)\s*$/m.exec(pointer)?.[1];
    if (gitdir) {
      const worktree = resolve(dir, gitdir);
      const common = read(join(worktree, "commondir"))?.trim();
      return join(common ? resolve(worktree, common) : worktree, "config");
    }
    if (dirname(dir) === dir) return null;
  }
}
