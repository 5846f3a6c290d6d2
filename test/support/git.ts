// The tests' own git: nothing from this machine's or a workspace's configuration but what it names.
import { execFileSync } from "node:child_process";

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
