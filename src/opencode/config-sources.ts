// opencode's configuration as oc-exec can read it without running opencode: the global file, the
// file OPENCODE_CONFIG names, the workspace's, and OPENCODE_CONFIG_CONTENT (with --config merged
// in), lowest precedence first as opencode merges them. Read by `doctor` (which providers carry
// their own key) and the sandbox (which hosts the turn's models live on).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { xdgHome } from "../xdg.js";

export type OpencodeProviderConfig = { options?: { apiKey?: unknown; baseURL?: unknown } };
export type OpencodeConfig = {
  provider?: Record<string, OpencodeProviderConfig | undefined>;
  model?: unknown;
  small_model?: unknown;
  mcp?: Record<string, { type?: unknown; url?: unknown } | undefined>;
};

export type ConfigSource = { source: string; config: OpencodeConfig };

export function opencodeConfigDir(env: NodeJS.ProcessEnv): string {
  return join(xdgHome(env, "config"), "opencode");
}

/** Each source that exists and parses, lowest precedence first; one that does not is skipped. */
export function readOpencodeConfigs(env: NodeJS.ProcessEnv, workspace: string, content?: string): ConfigSource[] {
  const configDir = opencodeConfigDir(env);
  const files = [
    ...["config.json", "opencode.json", "opencode.jsonc"].map((f) => join(configDir, f)),
    ...(env.OPENCODE_CONFIG ? [env.OPENCODE_CONFIG] : []),
    ...["opencode.json", "opencode.jsonc", join(".opencode", "opencode.json")].map((f) => join(workspace, f)),
  ];
  const sources: [string, () => string][] = [
    ...files.map((file) => [file, () => readFileSync(file, "utf8")] as [string, () => string]),
    ["OPENCODE_CONFIG_CONTENT", () => content ?? env.OPENCODE_CONFIG_CONTENT ?? ""],
  ];
  const found: ConfigSource[] = [];
  for (const [source, read] of sources) {
    try {
      // JSONC: whole-line comments are what opencode's own configs carry.
      const config = JSON.parse(read().replace(/^\s*\/\/.*$/gm, "") || "{}") as unknown;
      if (config && typeof config === "object" && !Array.isArray(config))
        found.push({ source, config: config as OpencodeConfig });
    } catch {
      // Missing or not JSON: opencode reports a broken config itself when it starts.
    }
  }
  return found;
}
