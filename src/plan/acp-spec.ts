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

export type AcpSpec = {
  /** The built-in name, or the command's first word. */
  name: string;
  /** The command to start; null: the opencode oc-exec uses, with `acp`. */
  argv: string[] | null;
};

export function resolveAcp(text: string, label: string): AcpSpec {
  const trimmed = text.trim();
  if (Object.hasOwn(ACP_AGENTS, trimmed)) {
    const argv = ACP_AGENTS[trimmed as keyof typeof ACP_AGENTS];
    return { name: trimmed, argv: argv ? [...argv] : null };
  }
  const argv = splitCommand(trimmed);
  if (argv.length === 0)
    throw new ConfigError(
      `${label} takes an agent: one of ${Object.keys(ACP_AGENTS).join(", ")}, or its ACP command line (e.g. 'gemini --acp')`,
      "UsageError",
    );
  return { name: argv[0]!.split("/").at(-1)!, argv };
}
