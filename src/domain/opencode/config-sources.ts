// opencode's configuration as oc-exec can read it without running opencode: the global files, the
// file OPENCODE_CONFIG names, the project's (every opencode.json(c) and .opencode/opencode.json(c)
// from the repository's root down to the workspace, as opencode finds them), and
// OPENCODE_CONFIG_CONTENT (with --config merged in), lowest precedence first as opencode merges
// them. Read by `doctor` (which providers carry their own key) and the sandbox (which hosts the
// turn's models live on). The project's files are the repository's: a pull request writes them, so
// each source says whether it is the user's own (trusted) or the workspace's.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { xdgHome } from "../../kernel/xdg.js";

export type OpencodeProviderConfig = { options?: { apiKey?: unknown; baseURL?: unknown } };
export type OpencodeConfig = {
  provider?: Record<string, OpencodeProviderConfig | undefined>;
  model?: unknown;
  small_model?: unknown;
  mcp?: Record<string, { type?: unknown; url?: unknown } | undefined>;
};

/** One source of configuration; `trusted` is false for the workspace's own files. */
export type ConfigSource = { source: string; config: OpencodeConfig; trusted: boolean };

export function opencodeConfigDir(env: NodeJS.ProcessEnv): string {
  return join(xdgHome(env, "config"), "opencode");
}

/**
 * The directories opencode reads project configuration from, root first: the workspace and each
 * parent up to its worktree, the repository's top (the nearest directory with a `.git`), or up to
 * `/` outside a repository; and that top (null outside one).
 */
export function projectDirs(workspace: string): { dirs: string[]; top: string | null } {
  const dirs: string[] = [];
  for (let at = workspace; ; at = dirname(at)) {
    dirs.push(at);
    if (existsSync(join(at, ".git"))) return { dirs: dirs.reverse(), top: at };
    if (dirname(at) === at) return { dirs: dirs.reverse(), top: null };
  }
}

/** The project's configuration files opencode would read, lowest precedence first. */
function projectConfigFiles(dirs: string[]): string[] {
  return [
    ...["opencode.jsonc", "opencode.json"].flatMap((f) => dirs.map((d) => join(d, f))),
    ...dirs.flatMap((d) => ["opencode.jsonc", "opencode.json"].map((f) => join(d, ".opencode", f))),
  ];
}

/** Each source that exists and parses, lowest precedence first; one that does not is skipped. */
export function readOpencodeConfigs(env: NodeJS.ProcessEnv, workspace: string, content?: string): ConfigSource[] {
  const configDir = opencodeConfigDir(env);
  const project = projectDirs(workspace);
  const own = [
    ...["config.json", "opencode.json", "opencode.jsonc"].map((f) => join(configDir, f)),
    ...(env.OPENCODE_CONFIG ? [env.OPENCODE_CONFIG] : []),
  ];
  const sources: [string, () => string, boolean][] = [
    ...own.map((file) => [file, () => readFileSync(file, "utf8"), true] as [string, () => string, boolean]),
    // The repository's files (the workspace's, outside one) are the pull request's; a parent's
    // outside the repository is the machine's.
    ...projectConfigFiles(project.dirs).map(
      (file) =>
        [file, () => readFileSync(file, "utf8"), !isWithin(file, project.top ?? workspace)] as [
          string,
          () => string,
          boolean,
        ],
    ),
    ["OPENCODE_CONFIG_CONTENT", () => content ?? env.OPENCODE_CONFIG_CONTENT ?? "", true],
  ];
  const found: ConfigSource[] = [];
  for (const [source, read, trusted] of sources) {
    try {
      // JSONC: whole-line comments are what opencode's own configs carry.
      const config = JSON.parse(read().replace(/^\s*\/\/.*$/gm, "") || "{}") as unknown;
      if (config && typeof config === "object" && !Array.isArray(config))
        found.push({ source, config: config as OpencodeConfig, trusted });
    } catch {
      // Missing or not JSON: opencode reports a broken config itself when it starts.
    }
  }
  return found;
}

const isWithin = (path: string, dir: string) => path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);

/** A source's name as a person finds it: a workspace file relative to the workspace. */
export const sourceLabel = (source: ConfigSource, workspace: string) =>
  source.trusted ? source.source : relative(workspace, source.source) || source.source;
