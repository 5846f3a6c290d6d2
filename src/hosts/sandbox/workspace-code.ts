// The code a workspace makes opencode load into its own process. A sandboxed server's password
// cannot be kept from such code: opencode 1.18.33 hands every plugin a client whose headers carry
// it, and code in the process reads the process's own initial environment (/proc/self/environ,
// which no removal changes, and which non-dumpable does not close to the process itself). The
// guard plugin (server-guard.ts) keeps the password from the tools, which are other processes; it
// cannot keep it from code inside opencode, whatever order the plugins load in. So a sandboxed
// server refuses a workspace that ships such code.
//
// Where opencode 1.18.33 looks, for an instance on a directory (read from its bundle):
// - config files `opencode.json`/`opencode.jsonc` in the directory and each parent up to its
//   worktree (the git repository's top, or `/` outside one), and in each `.opencode` directory on
//   the same way: their `plugin` entries;
// - each of those `.opencode` directories: `{plugin,plugins}/*.{ts,js}` and `{tool,tools}/*.{js,ts}`
//   (custom tools are modules imported into opencode's process too);
// none of them when OPENCODE_DISABLE_PROJECT_CONFIG is set (projectConfigDisabled). The user's own configuration
// (~/.config/opencode, ~/.opencode, OPENCODE_CONFIG_DIR, OPENCODE_CONFIG_CONTENT) is the user's, not
// the workspace's, and stays allowed.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { projectDirs } from "../../domain/opencode/config-sources.js";

const CODE_DIRS = ["plugin", "plugins", "tool", "tools"] as const;
const CODE_FILE = /\.(js|ts)$/;
const CONFIG_FILES = ["opencode.json", "opencode.jsonc"] as const;

/** Whether opencode skips the project's configuration and `.opencode` directories (its own test of the flag). */
export function projectConfigDisabled(env: NodeJS.ProcessEnv): boolean {
  const value = env.OPENCODE_DISABLE_PROJECT_CONFIG?.toLowerCase();
  return value === "true" || value === "1";
}

/**
 * The files through which opencode, started on dir with the project's configuration, would load
 * code from the workspace: plugin and tool modules, and config files that name plugins.
 */
export function workspaceCode(dir: string, env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME || homedir();
  // The user's own `.opencode` (opencode reads ~/.opencode as the user's, wherever the workspace is).
  const own = new Set([
    join(home, ".opencode"),
    ...(env.OPENCODE_CONFIG_DIR ? [resolve(env.OPENCODE_CONFIG_DIR)] : []),
  ]);
  const found: string[] = [];
  for (const at of projectDirs(resolve(dir)).dirs.reverse()) {
    for (const name of CONFIG_FILES) if (namesPlugins(join(at, name))) found.push(join(at, name));
    const dotDir = join(at, ".opencode");
    if (own.has(dotDir) || !isDirectory(dotDir)) continue;
    for (const name of CONFIG_FILES) if (namesPlugins(join(dotDir, name))) found.push(join(dotDir, name));
    for (const sub of CODE_DIRS) found.push(...codeFiles(join(dotDir, sub)));
  }
  return found;
}

/** The modules opencode would import from a plugin or tool directory (dot files and links included, as its glob). */
function codeFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => CODE_FILE.test(name))
      .map((name) => join(dir, name))
      .filter((file) => {
        try {
          return statSync(file).isFile();
        } catch {
          return false;
        }
      })
      .sort();
  } catch {
    return [];
  }
}

/** Whether a config file names plugins; one that does not parse but has a `plugin` key counts too. */
function namesPlugins(file: string): boolean {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return false;
  }
  try {
    const config = JSON.parse(text.replace(/^\s*\/\/.*$/gm, "") || "{}") as { plugin?: unknown };
    return Array.isArray(config?.plugin) ? config.plugin.length > 0 : config?.plugin !== undefined;
  } catch {
    // JSONC opencode reads and JSON.parse does not (block comments, trailing commas): the key decides.
    return /"plugin"\s*:/.test(text);
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Why a sandboxed server cannot serve dir, naming the files; null when the workspace ships no code. */
export function workspaceCodeProblem(dir: string, env: NodeJS.ProcessEnv, what: string): string | null {
  const files = workspaceCode(dir, env);
  if (files.length === 0) return null;
  return `${what}: the workspace ships code that opencode would load into the server's own process, where the server's password cannot be kept from it (${files.join(", ")}); remove it, run single sandboxed turns instead of a server, or set OPENCODE_DISABLE_PROJECT_CONFIG=1 to start the server without the workspace's opencode configuration`;
}
