// git as oc-exec asks it about a workspace the agent may have written: nothing of the repository's
// that runs code (fsmonitor, hooks) and no lock taken, only a list of names.
import { execFileSync } from "node:child_process";

/** Options that keep git from running the repository's code or taking its optional locks. */
export const NO_REPO_CODE = [
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.untrackedCache=false",
  "-c",
  "core.hooksPath=/dev/null",
  "--no-optional-locks",
];

/** The files git lists (tracked, and untracked but not ignored), each once; throws when git fails. */
export function gitLsFiles(
  cwd: string,
  env: NodeJS.ProcessEnv,
  options: { before?: string[]; extra?: string[]; timeoutMs: number },
): string[] {
  const out = execFileSync(
    "git",
    [
      ...NO_REPO_CODE,
      ...(options.before ?? []),
      "ls-files",
      "-z",
      ...(options.extra ?? []),
      "--cached",
      "--others",
      "--exclude-standard",
    ],
    { cwd, env, maxBuffer: 256 * 1024 * 1024, timeout: options.timeoutMs, stdio: ["ignore", "pipe", "pipe"] },
  );
  return [
    ...new Set(
      out
        .toString("utf8")
        .split("\0")
        .filter((p) => p !== ""),
    ),
  ];
}

/**
 * The submodules (gitlinks, mode 160000) git's index lists under `cwd`, relative to it, and (with
 * `recurse`) those of the checked-out submodules under them; none when git fails (no work tree).
 */
export function gitLinks(cwd: string, env: NodeJS.ProcessEnv, options: { timeoutMs: number }): string[] {
  const links = new Set<string>();
  for (const recurse of [[], ["--recurse-submodules"]]) {
    let out: Buffer;
    try {
      out = execFileSync("git", [...NO_REPO_CODE, "ls-files", ...recurse, "--stage", "-z"], {
        cwd,
        env: { ...env, GIT_OPTIONAL_LOCKS: "0" },
        maxBuffer: 256 * 1024 * 1024,
        timeout: options.timeoutMs,
        stdio: ["ignore", "pipe", "ignore"],
      });
    } catch {
      continue;
    }
    for (const entry of out.toString("utf8").split("\0"))
      if (entry.startsWith("160000 ")) links.add(entry.slice(entry.indexOf("\t") + 1));
  }
  return [...links];
}
