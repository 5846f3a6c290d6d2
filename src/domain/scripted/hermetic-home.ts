// A throwaway HOME/XDG tree and the environment that points opencode at the scripted model server,
// so no test touches the user's own opencode config, sessions or credentials.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type HermeticHome = { root: string; workspace: string; env: Record<string, string>; cleanup(): void };

export function providerConfig(baseURL: string, provider = "fake", model = "fake-model"): string {
  return JSON.stringify({
    provider: {
      [provider]: {
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL, apiKey: "x" },
        models: { [model]: { name: "Scripted" } },
      },
    },
    model: `${provider}/${model}`,
  });
}

export function makeHermeticHome(baseURL: string, prefix = "oc-exec-test-"): HermeticHome {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const workspace = join(root, "workspace");
  mkdirSync(workspace);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: root,
    XDG_CONFIG_HOME: join(root, "config"),
    XDG_DATA_HOME: join(root, "data"),
    XDG_CACHE_HOME: join(root, "cache"),
    XDG_STATE_HOME: join(root, "state"),
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    OPENCODE_DISABLE_MODELS_FETCH: "true",
    OPENCODE_DISABLE_AUTOUPDATE: "true",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "true",
    OPENCODE_AUTO_SHARE: "false",
    OPENCODE_CONFIG_CONTENT: providerConfig(baseURL),
    // `opencode export` after each turn costs another opencode start; the export tests turn it on.
    OC_EXEC_EXPORT: "0",
  };
  return { root, workspace, env, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
