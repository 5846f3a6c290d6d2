// The agent a turn runs through the Agent Client Protocol (--acp AGENT, OC_EXEC_ACP, a library's
// `acp`), as the plan holds it: a built-in name mapped to its documented command, or a command line
// of the caller's, split as a shell splits words and run without a shell. How it is started and
// spoken to is the ACP host's (hosts/acp/).
import { ConfigError } from "../domain/outcome/errors.js";
import { splitCommand } from "../kernel/command-words.js";

/**
 * The built-in agents and their ACP commands, found on PATH. `opencode` is the opencode oc-exec
 * already uses (--opencode, OC_EXEC_OPENCODE, the bundled one), with `acp`.
 */
export const ACP_AGENTS = {
  opencode: null,
  gemini: ["gemini", "--acp"],
  qwen: ["qwen", "--acp"],
  claude: ["claude-agent-acp"],
  codex: ["codex-acp"],
  copilot: ["copilot", "--acp", "--stdio"],
} as const satisfies Record<string, readonly string[] | null>;

/**
 * What a built-in agent needs inside the sandbox (--sandbox, --full-auto): the one table of it
 * (docs/sandbox.md shows it). `opencode` needs what `opencode run` needs (its configuration's
 * providers and the models); an agent not listed here is refused under a sandbox, never run
 * outside it. Everything else of the sandbox is the same for every agent: HOME is an empty,
 * writable, throwaway directory inside (so the agent's state directory is its own, thrown away
 * with the run), the workspace and --writable are writable (workspace-write), the network is the
 * proxy's allow-list (these hosts and --allow-host).
 */
export type AcpSandboxNeeds = {
  /** host:port entries its provider's API is at by default. */
  hosts: readonly string[];
  /** Variables whose URL moves the provider (a gateway, a proxy): its host:port replaces `hosts`. */
  baseUrls: readonly string[];
  /** Variables holding its keys: a stand-in inside; the proxy puts the real key into requests to those hosts only. */
  keys: readonly string[];
  /** Other variables it reads (its model, telemetry switches), passed in as they are; `*` patterns as --pass-env. */
  env: readonly string[];
  /** Its configuration files under HOME, shown read-only when they exist (its own state directory stays the sandbox's). */
  config: readonly string[];
  /** Variables it takes its temporary directory from instead of TMPDIR: set to the sandbox's own. */
  tmp: readonly string[];
  /** Arguments added to its command in the sandbox. */
  args: readonly string[];
  /**
   * Its configuration directories in the workspace (hooks, MCP servers: code its next run outside
   * the sandbox would run): read-only inside, made to exist beforehand, as `.opencode` is for opencode.
   */
  workspace: readonly string[];
};

export const ACP_SANDBOX_NEEDS: Partial<Record<keyof typeof ACP_AGENTS, AcpSandboxNeeds>> = {
  gemini: {
    hosts: ["generativelanguage.googleapis.com:443"],
    baseUrls: ["GOOGLE_GEMINI_BASE_URL"],
    keys: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    env: ["GEMINI_MODEL", "GEMINI_TELEMETRY_*"],
    config: [".gemini/settings.json", ".gemini/GEMINI.md"],
    tmp: [],
    args: [],
    workspace: [".gemini"],
  },
  qwen: {
    hosts: ["api.openai.com:443"],
    baseUrls: ["OPENAI_BASE_URL"],
    keys: ["OPENAI_API_KEY"],
    env: ["OPENAI_MODEL", "QWEN_MODEL"],
    config: [".qwen/settings.json", ".qwen/QWEN.md"],
    tmp: [],
    args: [],
    workspace: [".qwen"],
  },
  claude: {
    hosts: ["api.anthropic.com:443"],
    baseUrls: ["ANTHROPIC_BASE_URL"],
    keys: ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
    env: ["ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "CLAUDE_CODE_*", "DISABLE_*", "IS_SANDBOX"],
    config: [".claude/settings.json", ".claude/CLAUDE.md"],
    // Claude Code's shell keeps its working files in CLAUDE_CODE_TMPDIR, else /tmp (read-only inside).
    tmp: ["CLAUDE_CODE_TMPDIR"],
    args: [],
    workspace: [".claude"],
  },
  codex: {
    hosts: ["api.openai.com:443"],
    baseUrls: ["OPENAI_BASE_URL"],
    keys: ["OPENAI_API_KEY", "CODEX_API_KEY"],
    env: ["CODEX_HOME"],
    config: [".codex/config.toml", ".codex/AGENTS.md"],
    tmp: [],
    // Codex's own sandbox (bubblewrap, seccomp) cannot start inside oc-exec's: its commands would
    // hang. oc-exec's sandbox holds the agent and them instead.
    args: ["-c", 'sandbox_mode="danger-full-access"'],
    workspace: [".codex"],
  },
  copilot: {
    // A provider of your own (BYOK) only: its GitHub sign-in stays outside the sandbox.
    hosts: [],
    baseUrls: ["COPILOT_PROVIDER_BASE_URL"],
    keys: ["COPILOT_PROVIDER_API_KEY"],
    env: ["COPILOT_MODEL", "COPILOT_OFFLINE", "COPILOT_AUTO_UPDATE", "COPILOT_PROVIDER_*"],
    // Not ~/.copilot/config.json: Copilot keeps its GitHub token there where no keychain is.
    config: [],
    tmp: [],
    args: [],
    workspace: [],
  },
};

export type AcpSpec = {
  /** The built-in name, or the command's first word. */
  name: string;
  /** The command to start; null: the opencode oc-exec uses, with `acp`. */
  argv: string[] | null;
  /** What it needs inside a sandbox (ACP_SANDBOX_NEEDS), or null: opencode's own, or unknown. */
  sandbox: AcpSandboxNeeds | null;
};

export function resolveAcp(text: string, label: string): AcpSpec {
  const trimmed = text.trim();
  if (Object.hasOwn(ACP_AGENTS, trimmed)) {
    const argv = ACP_AGENTS[trimmed as keyof typeof ACP_AGENTS];
    return {
      name: trimmed,
      argv: argv ? [...argv] : null,
      sandbox: ACP_SANDBOX_NEEDS[trimmed as keyof typeof ACP_AGENTS] ?? null,
    };
  }
  const argv = splitCommand(trimmed);
  if (argv.length === 0)
    throw new ConfigError(
      `${label} takes an agent: one of ${Object.keys(ACP_AGENTS).join(", ")}, or its ACP command line (e.g. 'gemini --acp')`,
      "UsageError",
    );
  return { name: argv[0]!.split("/").at(-1)!, argv, sandbox: null };
}
