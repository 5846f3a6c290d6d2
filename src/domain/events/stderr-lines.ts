// Recognizes the few opencode stderr lines that carry meaning. They are plain text with ANSI
// colors, not a stable interface, so each pattern is loose and everything else is kept only as
// a bounded tail for error messages.
export type StderrLine =
  | { kind: "permission"; permission: string; pattern: string | null }
  | { kind: "agent-fallback"; agent: string; text: string }
  | { kind: "log"; level: string; fields: Record<string, string> }
  | { kind: "error"; message: string }
  | { kind: "blank" }
  | { kind: "other"; text: string };

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC and end OSC titles with BEL.
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*\u0007/g;

export function stripAnsi(text: string): string {
  return text.includes("\u001b") ? text.replace(ANSI, "") : text;
}

// `! permission requested: bash (echo hi); auto-rejecting` (stderr in 1.18, stdout in some releases)
const PERMISSION = /^!\s*permission requested:\s*([^\s(]+)\s*(?:\((.*)\))?\s*;\s*auto-rejecting\s*$/;
// `! agent "nosuchagent" not found. Falling back to default agent`
const AGENT_FALLBACK = /^!\s*agent "([^"]*)" not found/;
// `Error: ...` (1.14+), `error: ...` (bun's uncaught error, 1.0)
const ERROR_LINE = /^error:\s*(.*)$/i;

export function parsePermissionNotice(text: string): { permission: string; pattern: string | null } | null {
  const m = PERMISSION.exec(stripAnsi(text).trim());
  return m ? { permission: m[1]!, pattern: m[2] ?? null } : null;
}

// 1.0: `◆  Permission required to run: echo hi` (a TUI prompt on stdout, waiting for a key).
const PROMPT = /Permission required to run:\s*(.*)$/;
const OUTSIDE = /^Access file outside working directory:\s*(.*)$/;

export function parsePermissionPrompt(text: string): { permission: string | null; pattern: string | null } | null {
  const m = PROMPT.exec(stripAnsi(text).trim());
  if (!m) return null;
  const what = m[1]!.trim();
  const outside = OUTSIDE.exec(what);
  return outside
    ? { permission: "external_directory", pattern: outside[1]! }
    : { permission: null, pattern: what || null };
}

export function parseStderrLine(raw: string): StderrLine {
  const text = stripAnsi(raw).trim();
  if (text === "") return { kind: "blank" };
  const permission = parsePermissionNotice(text);
  if (permission) return { kind: "permission", ...permission };
  const agent = AGENT_FALLBACK.exec(text);
  if (agent) return { kind: "agent-fallback", agent: agent[1]!, text: text.replace(/^!\s*/, "") };
  const error = ERROR_LINE.exec(text);
  if (error) return { kind: "error", message: error[1]! };
  if (text.startsWith("timestamp=") || text.startsWith("level=")) {
    const fields = parseLogfmt(text);
    if (fields.level) return { kind: "log", level: fields.level, fields };
  }
  const older = OLDER_LOG.exec(text);
  if (older) {
    // 1.14: `INFO  2026-11-23T06:44:10 +3ms service=llm providerID=fake ... stream`, the message
    // last and unquoted. Its ERROR lines stay ordinary text: they explain failures in the tail.
    const [, level, time, rest] = older;
    const message = rest!.trim().split(/\s+/).at(-1) ?? "";
    const fields = { ...parseLogfmt(rest!), level: level!, timestamp: `${time}Z` };
    return { kind: "log", level: level!, fields: message.includes("=") ? fields : { ...fields, message } };
  }
  return { kind: "other", text };
}

const OLDER_LOG = /^(DEBUG|INFO|WARN)\s+(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)\s+\+\d+ms\s+(.*)$/;

/** Minimal logfmt: key=value and key="quoted \"value\"" pairs. */
export function parseLogfmt(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([A-Za-z0-9_.-]+)=(?:"((?:[^"\\]|\\.)*)"|(\S*))/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out[m[1]!] = m[2] !== undefined ? m[2].replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c)) : m[3]!;
  }
  return out;
}
