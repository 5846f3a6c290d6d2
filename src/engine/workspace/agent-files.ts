// The files a coding agent started in the workspace loads on its own, before anyone reads them:
// opencode's configuration, the instruction files agents put into their system prompt, and other
// agents' configuration (hooks and MCP servers that run commands, skills, commands, subagents).
// What a sandboxed turn writes there is followed by the next agent started in the workspace, an
// unsandboxed `oc-exec --auto` or `claude -p` of the job's next step, outside any sandbox.
// AGENT_FILES is the one list: the detection below reads it, docs/sandbox.md shows it (a unit test
// keeps the two in step). Read from the file system itself, before and after the turn: git's
// listing would miss a file the agent also named in a .gitignore it wrote, and a workspace outside
// git would show only the tools' own writes.
import { type Dirent, lstatSync, readdirSync, readlinkSync, type Stats, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/**
 * `opencode_config`: reported as `opencode_config_changed` (its meaning unchanged since it came);
 * the other two kinds as `agent_files_changed`.
 */
export type AgentFileKind = "opencode_config" | "instructions" | "agent_config";

export type AgentFileRule = {
  kind: AgentFileKind;
  /**
   * What it matches, as docs/sandbox.md shows it: paths separated by ", ". A path matches at any
   * depth; one that ends in / is a directory, matched with all below it.
   */
  pattern: string;
  /** Who reads it, and what it can make them do. */
  why: string;
};

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A pattern's paths as one expression over a path relative to the workspace. */
const source = (pattern: string) =>
  pattern
    .split(", ")
    .map((p) => (p.endsWith("/") ? `(^|/)${literal(p.slice(0, -1))}(/|$)` : `(^|/)${literal(p)}$`))
    .join("|");

export const AGENT_FILES: readonly AgentFileRule[] = [
  {
    kind: "opencode_config",
    pattern: "opencode.json, opencode.jsonc",
    why: "opencode's configuration: MCP servers whose commands run at its start, plugins, instructions, agents",
  },
  {
    kind: "opencode_config",
    pattern: ".opencode/",
    why: "opencode's configuration directory: plugins and custom tools (code it loads), agents, commands, skills",
  },
  {
    kind: "instructions",
    pattern: "AGENTS.md",
    why: "opencode 1.18.33 puts every `AGENTS.md` from its directory up to the repository's top into the system prompt, and a nested one into a read tool's answer for a file below it; Codex, Copilot and others read it too",
  },
  {
    kind: "instructions",
    pattern: "AGENTS.override.md",
    why: "Codex reads it instead of `AGENTS.md`",
  },
  {
    kind: "instructions",
    pattern: "CLAUDE.md",
    why: "Claude Code's instructions; opencode 1.18.33 reads it where no `AGENTS.md` is",
  },
  {
    kind: "instructions",
    pattern: "CLAUDE.local.md",
    why: "Claude Code's personal instructions (usually in `.gitignore` already)",
  },
  {
    kind: "instructions",
    pattern: "CONTEXT.md",
    why: "opencode 1.18.33 reads it where neither `AGENTS.md` nor `CLAUDE.md` is (seen in its bundle)",
  },
  {
    kind: "instructions",
    pattern: "GEMINI.md",
    why: "Gemini CLI's instructions, from every directory above and below where it starts",
  },
  {
    kind: "instructions",
    pattern: "QWEN.md",
    why: "Qwen Code's instructions (Gemini CLI's rules)",
  },
  {
    kind: "instructions",
    pattern: ".github/copilot-instructions.md",
    why: "GitHub Copilot's instructions (the CLI and the coding agent)",
  },
  {
    kind: "instructions",
    pattern: ".github/instructions/",
    why: "GitHub Copilot's path-specific instructions (`*.instructions.md`)",
  },
  {
    kind: "instructions",
    pattern: ".goosehints",
    why: "Goose's instructions",
  },
  {
    kind: "instructions",
    pattern: ".cursorrules",
    why: "Cursor's instructions (the older single file; the cursor-agent CLI reads it)",
  },
  {
    kind: "agent_config",
    pattern: ".claude/",
    why: "Claude Code: `settings.json` and `settings.local.json` hooks run shell commands, MCP servers, permissions; skills (opencode 1.18.33 loads `.claude/skills` too), commands, subagents",
  },
  {
    kind: "agent_config",
    pattern: ".mcp.json",
    why: "the project's MCP servers (Claude Code, and other agents that read it): commands started with the agent",
  },
  {
    kind: "agent_config",
    pattern: ".gemini/",
    why: "Gemini CLI: `settings.json`'s `mcpServers` (commands) and tool settings, custom commands, extensions",
  },
  {
    kind: "agent_config",
    pattern: ".qwen/",
    why: "Qwen Code: as `.gemini/`",
  },
  {
    kind: "agent_config",
    pattern: ".codex/",
    why: "Codex: a project's `config.toml` (MCP servers, sandbox and approval settings), prompts",
  },
  {
    kind: "agent_config",
    pattern: ".agents/",
    why: "skills read by opencode 1.18.33 (`.agents/skills`, seen in its bundle) and Codex",
  },
  {
    kind: "agent_config",
    pattern: ".cursor/",
    why: "Cursor and its CLI: rules, `mcp.json` (commands)",
  },
  {
    kind: "agent_config",
    pattern: ".github/agents/",
    why: "GitHub Copilot's custom agents (their prompts, tools and MCP servers)",
  },
  {
    kind: "agent_config",
    pattern: ".github/skills/",
    why: "GitHub Copilot's skills",
  },
  {
    kind: "agent_config",
    pattern: ".aider.conf.yml",
    why: "aider's configuration: the test and lint commands it runs",
  },
];

// opencode's own patterns match exactly, as before this table. The others ignore case: on a
// case-insensitive file system (macOS's default) `agents.md` is read as `AGENTS.md`.
const MATCHERS = AGENT_FILES.map((rule) => ({
  kind: rule.kind,
  test: new RegExp(source(rule.pattern), rule.kind === "opencode_config" ? "" : "i"),
}));

/** Any rule's paths, in any case: one test of each entry the walk meets, most of them no agent file. */
const ANY = new RegExp(AGENT_FILES.map((rule) => source(rule.pattern)).join("|"), "i");

/** Which kind of agent file a path (relative to the workspace) is, or null; opencode's first. */
export function agentFileKind(path: string): AgentFileKind | null {
  if (!ANY.test(path)) return null;
  return MATCHERS.find((m) => m.test.test(path))?.kind ?? null;
}

/** Each agent file's path (relative to the workspace), its kind, and what it is now. */
export type AgentFiles = Map<string, { kind: AgentFileKind; seen: string }>;

const stateOf = (stat: Stats) => `${stat.mode}:${stat.size}:${stat.ino}:${stat.mtimeMs}:${stat.ctimeMs}`;

/**
 * How many entries the links among the agent files are followed to, in all, per survey: a link to a
 * large tree (the workspace itself) costs no more than this. Past it a directory's rest is compared
 * as a mark, so a change there may go unseen: see docs/sandbox.md.
 */
const FOLLOWED_ENTRIES = 10_000;

/**
 * What a link leads to, so that a change made through it counts (`AGENTS.md -> docs/agents.md`, the
 * turn writing docs/agents.md): the file's state, or each entry's below the directory (links not
 * followed again); "" where it leads nowhere.
 */
function linkTarget(root: string, abs: string, budget: { left: number }): string {
  // Only where it leads into the workspace: a link out of it that the turn made is removed after
  // it (outside-links.ts), and one the repository had leads where the sandbox kept the turn from
  // writing; nor is a path outside (a network mount) stat'ed for it.
  const rel = relative(root, resolve(dirname(abs), readlinkSync(abs)));
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return "";
  let stat: Stats;
  try {
    stat = statSync(abs);
  } catch {
    return "";
  }
  if (!stat.isDirectory()) return stateOf(stat);
  const seen: string[] = [];
  const walk = (dir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (budget.left-- <= 0) {
        seen.push("…");
        return;
      }
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else
        try {
          const at = lstatSync(path);
          seen.push(`${relative(abs, path)}=${at.isSymbolicLink() ? `link:${readlinkSync(path)}` : stateOf(at)}`);
        } catch {
          // Gone meanwhile.
        }
    }
  };
  walk(abs);
  return seen.join("|");
}

/**
 * What an entry is: a link's target and what it leads to, a file's size and times (its ctime
 * changes at every write, and no process can set it back), so nothing is read. Null when it is gone,
 * and for an empty file where the sandbox library mounted over a missing path (`mountPoint`): the
 * agent cannot write there, the file is the library's and goes when the sandbox is reset.
 */
function signature(root: string, abs: string, mountPoint: boolean, budget: { left: number }): string | null {
  try {
    const stat = lstatSync(abs);
    if (stat.isSymbolicLink()) return `link:${readlinkSync(abs)}->${linkTarget(root, abs, budget)}`;
    if (mountPoint && stat.isFile() && stat.size === 0) return null;
    return stateOf(stat);
  } catch {
    return null;
  }
}

/**
 * Whether a path is where the sandbox library mounts over a missing path: one of `mountPoints`
 * (hosts/sandbox's SANDBOX_MOUNT_POINTS) at any depth, or at the top the first missing component of
 * one (`.claude` for `.claude/commands` where no `.claude` was).
 */
export const atMountPoint = (path: string, mountPoints: readonly string[]) =>
  mountPoints.some((m) => path === m || path.endsWith(`/${m}`) || m.startsWith(`${path}/`));

/**
 * The agent files' collector for one walk of the workspace (survey.ts): `visit` takes each entry
 * that is not a directory.
 */
export function agentFileCollector(mountPoints: readonly string[]) {
  const found: AgentFiles = new Map();
  const budget = { left: FOLLOWED_ENTRIES };
  return {
    found,
    visit(root: string, path: string): void {
      const kind = agentFileKind(path);
      if (kind === null) return;
      const seen = signature(root, join(root, path), atMountPoint(path, mountPoints), budget);
      if (seen !== null) found.set(path, { kind, seen });
    },
  };
}

/**
 * The agent files made, changed or removed between two surveys, sorted, split as the result reports
 * them: opencode's configuration, and the rest.
 */
export function agentFilesChanged(before: AgentFiles, now: AgentFiles): { opencode: string[]; others: string[] } {
  const changed = [...now].filter(([path, entry]) => before.get(path)?.seen !== entry.seen);
  const removed = [...before].filter(([path]) => !now.has(path));
  const all = [...changed, ...removed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    opencode: all.filter(([, e]) => e.kind === "opencode_config").map(([path]) => path),
    others: all.filter(([, e]) => e.kind !== "opencode_config").map(([path]) => path),
  };
}
