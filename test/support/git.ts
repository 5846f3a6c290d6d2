// The tests' own git: nothing from this machine's or a workspace's configuration but what it names.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const neutralGitEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

/** git in `cwd` with a fixed identity; its stdout. */
export const neutralGit = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
    cwd,
    env: neutralGitEnv,
    stdio: "pipe",
  }).toString();

/** git in a workspace as a CI job runs it there (its environment), with a fixed identity; its stdout. */
export const jobGit =
  (workspace: string, env: NodeJS.ProcessEnv) =>
  (...args: string[]): string =>
    execFileSync("git", ["-c", "user.email=ci@example.com", "-c", "user.name=ci", ...args], {
      cwd: workspace,
      env,
      encoding: "utf8",
    });

/** A CI checkout: a new repository in `workspace` with `files` committed; the job's git there. */
export function committedCheckout(workspace: string, env: NodeJS.ProcessEnv, files: Record<string, string>) {
  const git = jobGit(workspace, env);
  git("init", "-q");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(workspace, path)), { recursive: true });
    writeFileSync(join(workspace, path), text);
  }
  git("add", "-A");
  git("commit", "-qm", "base");
  return git;
}
