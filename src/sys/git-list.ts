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
