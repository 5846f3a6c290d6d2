// The sandbox a turn asks for, as the plan holds it: the modes, the spec resolved from the options,
// and the checks made while planning (a --writable path that would hand the agent what runs outside
// the sandbox later). How the sandbox is built from it is the sandbox host's (hosts/sandbox/).
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { join, relative, sep } from "node:path";
import { opencodeConfigDir } from "../domain/opencode/config-sources.js";
import { ocExecStateDir } from "../kernel/state-dir.js";
import { xdgHome } from "../kernel/xdg.js";

export const SANDBOX_MODES = ["off", "read-only", "workspace-write"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** The sandbox a turn asked for, resolved: absolute paths, hosts as given. */
export type SandboxSpec = {
  mode: Exclude<SandboxMode, "off">;
  writable: string[];
  /** More paths shown read-only (HOME is hidden but for a short list: home-view.ts). */
  readable: string[];
  allowHosts: string[];
  passEnv: string[];
};

/**
 * What the sandbox library keeps read-only in a workspace even where it does not exist yet, by
 * mounting over an empty file (or directory) it creates there and removes only when the sandbox is
 * reset, after the turn's result: its DANGEROUS_FILES and dangerous directories (sandbox-runtime's
 * sandbox-utils.js; test/unit/turn-patch.test.ts keeps the two lists in step). The agent cannot write
 * these paths, so an empty file at one of them after a sandboxed turn is the library's, not the turn's.
 */
export const SANDBOX_MOUNT_POINTS = [
  ".gitconfig",
  ".gitmodules",
  ".bashrc",
  ".bash_profile",
  ".zshrc",
  ".zprofile",
  ".profile",
  ".ripgreprc",
  ".mcp.json",
  ".vscode",
  ".idea",
  ".claude/commands",
  ".claude/agents",
] as const;

/**
 * Where a sandboxed turn may find an empty file of the sandbox's own: the library's mount points,
 * and `.git`, which the policy keeps from being made outside a repository by the same covering
 * (hosts/sandbox/git-paths.ts).
 */
export const SANDBOX_EMPTY_FILES: readonly string[] = [".git", ...SANDBOX_MOUNT_POINTS];

export type OpencodeDirs = { config: string; data: string; state: string; cache: string };

export function opencodeDirs(env: NodeJS.ProcessEnv): OpencodeDirs {
  return {
    config: opencodeConfigDir(env),
    data: join(xdgHome(env, "data"), "opencode"),
    state: join(xdgHome(env, "state"), "opencode"),
    cache: join(xdgHome(env, "cache"), "opencode"),
  };
}

/** Whether `inner` is `outer` or lies below it. */
const within = (inner: string, outer: string) => {
  const rel = relative(outer, inner);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep));
};

/**
 * Why a --writable path would hand the agent what runs outside the sandbox later, or null. Refused:
 * a path that contains HOME (its .bashrc, .gitconfig, opencode's configuration), and one that contains
 * or lies in opencode's configuration or state or oc-exec's own state (an MCP command the next turn
 * runs, the server records). Checked as given and, when it exists, where its links lead.
 */
export function writableProblem(path: string, env: NodeJS.ProcessEnv): string | null {
  const home = env.HOME || homedir();
  const dirs = opencodeDirs(env);
  const guarded: [string, string][] = [
    [dirs.config, "opencode's configuration"],
    [dirs.data, "opencode's data"],
    [dirs.state, "opencode's state"],
    [dirs.cache, "opencode's cache"],
    [ocExecStateDir(env), "oc-exec's state"],
  ];
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // Not there yet: the path as given is what would be bound.
  }
  for (const p of new Set([path, real])) {
    if (p === "/" || within(home, p)) return `${p} contains your home directory (${home})`;
    for (const [dir, what] of guarded)
      if (within(dir, p) || within(p, dir)) return `${p} ${within(dir, p) ? "contains" : "lies in"} ${what} (${dir})`;
  }
  return null;
}
