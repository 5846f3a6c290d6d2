// The built-in ACP agents (--acp NAME) pointed at a scripted server of their provider's API, offline:
// which server speaks that API, and the settings (in a throwaway HOME) and environment that turn off
// each agent's telemetry, usage statistics and update checks and send its model calls to loopback.
// A rehearsal (--rehearse with --acp NAME) runs the agent this way; so do the project's tests and
// the agents bench (test/support/peer-setup.ts).
//   gemini: gemini-cli, Google's Gemini API (gemini-server.ts), one fixed model (no model routing);
//   claude: Zed's claude-agent-acp over Claude Code, Anthropic's Messages API (anthropic-server.ts);
//   qwen: Qwen Code, OpenAI's chat completions (model-server.ts, the one opencode's tests use);
//   codex: Zed's codex-acp (Codex built in), OpenAI's Responses API (responses-server.ts), through a
//     provider of its config.toml, asking before any command it does not know to be safe
//     (approval_policy "untrusted"), so that the caller's policy answers;
//   copilot: GitHub Copilot CLI (its native binary, through the npm loader), OpenAI's chat completions
//     (model-server.ts) as its BYOK provider, offline: no GitHub sign-in, telemetry or update.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startAnthropicServer } from "./anthropic-server.js";
import { startGeminiServer } from "./gemini-server.js";
import { startModelServer } from "./model-server.js";
import { startResponsesServer } from "./responses-server.js";
import type { ChatRequest, RecordedRequest, Reply } from "./wire.js";

/** What the scripted server answers; its default, the documented scenarios (scripts.ts). */
type Script = (body: ChatRequest, seen: readonly RecordedRequest[]) => Reply;

export const AGENT_PROVIDERS = {
  gemini: {
    start: (script?: Script) => startGeminiServer(script),
    home: (home: string) => {
      mkdirSync(join(home, ".gemini"));
      writeFileSync(
        join(home, ".gemini", "settings.json"),
        JSON.stringify({
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          general: { disableAutoUpdate: true, disableUpdateNag: true },
        }),
      );
    },
    env: (url: string) => ({
      GEMINI_API_KEY: "test-gemini-key",
      GOOGLE_GEMINI_BASE_URL: url,
      GEMINI_MODEL: "gemini-2.5-flash",
      GEMINI_TELEMETRY_ENABLED: "false",
    }),
  },
  claude: {
    start: (script?: Script) => startAnthropicServer(script),
    home: () => {},
    env: (url: string) => ({
      ANTHROPIC_API_KEY: "sk-ant-test-key",
      ANTHROPIC_BASE_URL: url,
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      // Claude Code refuses to start as root unless told it runs in a sandbox (CI runs as root).
      IS_SANDBOX: "1",
    }),
  },
  qwen: {
    start: (script?: Script) => startModelServer(script),
    home: (home: string) => {
      mkdirSync(join(home, ".qwen"));
      writeFileSync(
        join(home, ".qwen", "settings.json"),
        JSON.stringify({
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          general: { disableAutoUpdate: true, disableUpdateNag: true },
          // After a turn Qwen Code sends the conversation to the model again in the background to
          // extract "memories" into its home: a model call that is not the turn's, raced by the
          // agent's end, so a turn made two calls or three.
          memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
          // And after every answered turn its ACP mode asks the model for a suggested next prompt
          // (the conversation and one more user message): another call the turn did not make.
          ui: { enableFollowupSuggestions: false },
        }),
      );
    },
    env: (url: string) => ({ OPENAI_API_KEY: "sk-test-qwen-key", OPENAI_BASE_URL: url, OPENAI_MODEL: "fake-model" }),
  },
  codex: {
    start: (script?: Script) => startResponsesServer(script),
    // A model Codex knows (its context window, its tools), served by the scripted provider; no
    // update check, analytics, feedback or OpenTelemetry export. This HOME is under /tmp: Codex
    // refuses to make its helpers (its sandbox's, apply_patch) in a CODEX_HOME inside TMPDIR, and
    // makes them here only because oc-exec gives the agent a TMPDIR of the run's own.
    home: (home: string, url: string) => {
      mkdirSync(join(home, ".codex"));
      writeFileSync(
        join(home, ".codex", "config.toml"),
        [
          'model = "gpt-5.4-mini"',
          'model_provider = "scripted"',
          'approval_policy = "untrusted"',
          "check_for_update_on_startup = false",
          "",
          "[model_providers.scripted]",
          'name = "Scripted"',
          `base_url = ${JSON.stringify(url)}`,
          'env_key = "SCRIPTED_API_KEY"',
          'wire_api = "responses"',
          "",
          "[analytics]",
          "enabled = false",
          "",
          "[feedback]",
          "enabled = false",
          "",
          "[otel]",
          'exporter = "none"',
          "",
        ].join("\n"),
      );
    },
    env: (_url: string, home: string) => ({
      CODEX_HOME: join(home, ".codex"),
      SCRIPTED_API_KEY: "sk-test-codex-key",
    }),
  },
  copilot: {
    start: (script?: Script) => startModelServer(script),
    home: () => {},
    // BYOK (`copilot help providers`): the provider's base URL, key and model. Offline mode skips
    // GitHub authentication, telemetry, web tools, the GitHub MCP server and auto-update. Copilot
    // unpacks its bundle (about 235 MB) into XDG_CACHE_HOME's copilot/pkg at its first start there.
    env: (url: string) => ({
      COPILOT_OFFLINE: "true",
      COPILOT_AUTO_UPDATE: "false",
      COPILOT_PROVIDER_BASE_URL: url,
      COPILOT_PROVIDER_API_KEY: "sk-test-copilot-key",
      COPILOT_MODEL: "fake-model",
    }),
  },
} as const;

export type ScriptedAgent = keyof typeof AGENT_PROVIDERS;

export const isScriptedAgent = (name: string): name is ScriptedAgent => Object.hasOwn(AGENT_PROVIDERS, name);
