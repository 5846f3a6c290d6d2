// An ACP agent's session updates, translated into the lines `opencode run --format json` prints, so
// that the one normalizer and classifier judge every agent as they judge opencode (the server's
// event stream is translated the same way: server-translate.ts). Pure: one update in, lines out.
//
// ACP has no steps: a prompt turn is one step here, opened by the first update and closed by the
// prompt's response, which carries the usage. Text arrives in chunks and is passed on whole, when
// a tool call or the end of the turn closes it. A permission oc-exec refused becomes the same
// `permission_rejected` line the server backend writes; the agent's own failure of the call follows.
import type { Json } from "./upstream.js";

/** What opencode's permission keys call each ACP tool kind (ACP: execute, edit, read, fetch, ...). */
const KIND_TO_KEY: Record<string, string> = {
  execute: "bash",
  edit: "edit",
  delete: "edit",
  move: "edit",
  read: "read",
  search: "grep",
  fetch: "webfetch",
  think: "think",
};

type ToolCall = { tool: string; input: Json; started: boolean; done: boolean };

export type AcpUsage = {
  inputTokens?: number;
  outputTokens?: number;
  thoughtTokens?: number | null;
  cachedReadTokens?: number | null;
  cachedWriteTokens?: number | null;
  totalTokens?: number;
};

export type AcpError = { code: number; message: string; data?: unknown };

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/**
 * A tool's name as opencode would call it: a first title that is one of opencode's lower-case tool
 * names, else its kind's key (claude-agent-acp's first title is a label, "Terminal").
 */
function toolName(update: Json): string {
  const title = str(update.title);
  if (title && /^[a-z][a-z0-9_-]*$/.test(title)) return title;
  const kind = str(update.kind);
  return (kind && KIND_TO_KEY[kind]) ?? kind ?? "other";
}

/** The text of a tool call's content blocks ({type: "content", content: {type: "text", text}}). */
function contentText(content: unknown): string | null {
  if (!Array.isArray(content)) return null;
  const texts = content.flatMap((c) =>
    isObject(c) && isObject(c.content) && c.content.type === "text" && typeof c.content.text === "string"
      ? [c.content.text]
      : [],
  );
  return texts.length > 0 ? texts.join("") : null;
}

/**
 * A permission request as opencode's policy names it: the key (opencode's name for the tool's kind;
 * `external_directory` for opencode's own request about a path outside the workspace, which comes
 * with kind `other`) and what the call touches, for the key's patterns: the command, the path, the
 * URL. The table is in docs/usage.md ("Another agent").
 */
export function permissionOf(toolCall: Json): { key: string; subject: string | null; patterns: string[] } {
  const kind = str(toolCall.kind);
  const input = isObject(toolCall.rawInput) ? toolCall.rawInput : {};
  const locations = Array.isArray(toolCall.locations)
    ? toolCall.locations.flatMap((l) => (isObject(l) && typeof l.path === "string" ? [l.path] : []))
    : [];
  const command = commandOf(toolCall, input);
  const external = kind === "other" && str(input.parentDir);
  const key = external ? "external_directory" : ((kind && KIND_TO_KEY[kind]) ?? kind ?? "other");
  const subject =
    command ??
    (external ? str(input.parentDir) : null) ??
    str(input.filePath) ??
    str(input.file_path) ??
    str(input.path) ??
    str(input.url) ??
    str(input.pattern) ??
    locations[0] ??
    null;
  return { key, subject, patterns: command ? [command] : locations };
}

/**
 * A command given as words, as one line: a shell's script when the words run one (codex-acp:
 * ["/bin/bash", "-lc", "npm test"] is `npm test`), else the words joined by spaces.
 */
function commandLine(words: unknown[]): string {
  const line = words.filter((w): w is string => typeof w === "string");
  const [shell, flag, script] = line;
  const runsScript =
    line.length === 3 && /(^|\/)(ba|da|z|k)?sh$/.test(shell!) && /^-l?c$/.test(flag!) && script !== undefined;
  return runsScript ? script! : line.join(" ");
}

/**
 * An execute call's command: its raw input's (a string, or words), else its title, which is where
 * an agent that sends no raw input puts it (gemini-cli: title "npm test").
 */
function commandOf(update: Json, input: Json): string | null {
  if (Array.isArray(input.command)) return commandLine(input.command);
  return (
    str(input.command) ?? (str(update.kind) === "execute" && !isObject(update.rawInput) ? str(update.title) : null)
  );
}

/**
 * What an agent's raw input carries besides the call's input, left out of the tool event: the
 * directory (opencode), the call's ids, start, parse and approval (codex-acp).
 */
const NOT_INPUT = new Set([
  "cwd",
  "call_id",
  "turn_id",
  "process_id",
  "started_at_ms",
  "parsed_cmd",
  "source",
  "auto_approved",
]);

/**
 * The turn's usage from the prompt's response: `usage` (opencode), else gemini-cli's
 * `_meta.quota.token_count`; null when the agent tells none.
 */
export function usageOf(response: Json): AcpUsage | null {
  if (isObject(response.usage)) return response.usage as AcpUsage;
  const meta = isObject(response._meta) ? response._meta : {};
  const quota = isObject(meta.quota) ? meta.quota : {};
  const count = isObject(quota.token_count) ? quota.token_count : null;
  if (!count) return null;
  const input = typeof count.input_tokens === "number" ? count.input_tokens : 0;
  const output = typeof count.output_tokens === "number" ? count.output_tokens : 0;
  return { inputTokens: input, outputTokens: output, totalTokens: input + output };
}

/**
 * A line from the agent made acceptable to the protocol's schema where an agent bends it and the
 * SDK would drop the whole update: a usage_update whose `used` is null (claude-agent-acp) keeps its
 * cost. Any other line is returned as it came.
 */
export function tolerantLine(line: string): string {
  if (!line.includes('"usage_update"')) return line;
  try {
    const message = JSON.parse(line) as { params?: { update?: Json } };
    const update = message.params?.update;
    if (!isObject(update) || update.sessionUpdate !== "usage_update") return line;
    if (typeof update.used !== "number") update.used = 0;
    if (typeof update.size !== "number") update.size = 0;
    return JSON.stringify(message);
  } catch {
    return line;
  }
}

const OVERFLOW_TEXT = /prompt is too long|context length|context window|input token count .* exceeds the maximum/i;

/** A provider's JSON error body passed on as the message (gemini-cli does): its own message. */
function providerMessage(message: string): string {
  if (!message.startsWith("{")) return message;
  try {
    const body = JSON.parse(message) as { error?: { message?: unknown } };
    return typeof body.error?.message === "string" ? body.error.message : message;
  } catch {
    return message;
  }
}

/** Codex's kinds of provider error that carry no status, with the status each stands for. */
const CODEX_STATUS: Record<string, number> = {
  bad_request: 400,
  unauthorized: 401,
  usage_limit_exceeded: 429,
  internal_server_error: 500,
  server_overloaded: 503,
};

/**
 * codex-acp's error: −32603 "Internal error" with data {message, codex_error_info}, the info a
 * kind's name ("context_window_exceeded") or {kind: {http_status_code}}. A status the info does not
 * give may be in the message, "unexpected status 401 Unauthorized: TEXT, url: URL", whose TEXT is
 * the provider's own. Null for any other agent's error.
 */
function codexError(data: Json): { overflow: boolean; status: number | null; message: string } | null {
  const info = data.codex_error_info;
  const said = str(data.message);
  if (info === undefined || said === null) return null;
  const kind = typeof info === "string" ? info : isObject(info) ? (Object.keys(info)[0] ?? "") : "";
  const detail = isObject(info) && isObject(info[kind]) ? (info[kind] as Json) : {};
  const unexpected = /^unexpected status (\d{3})[^:]*: (.*?)(?:, url: .*)?$/s.exec(said);
  const status =
    typeof detail.http_status_code === "number"
      ? detail.http_status_code
      : unexpected
        ? Number(unexpected[1])
        : (CODEX_STATUS[kind] ?? null);
  return {
    overflow: kind === "context_window_exceeded",
    status,
    message: unexpected ? providerMessage(unexpected[2]!) : said,
  };
}

/**
 * Copilot CLI's own notices, each a whole message chunk of its own: "Info: ..." (a retry, a
 * refusal's "Operation cancelled by user") and "Error: ..." (the turn's failure).
 */
const COPILOT_NOTICE = /^(Info|Error): /;

/**
 * Copilot CLI's failure, as its "Error: " notice words it: a provider's "STATUS text", an
 * authentication failure "(HTTP 401)", or retries given up on, "Last error: 429 text". Null status
 * for any other.
 */
function copilotError(notice: string): { status: number | null; message: string } {
  const text = notice.replace(/^Error: /, "");
  const provider = /^([45]\d\d) (.+)$/s.exec(text);
  if (provider) return { status: Number(provider[1]), message: provider[2]! };
  const status = /\(HTTP ([45]\d\d)\)|Last error: ([45]\d\d) /.exec(text);
  return { status: status ? Number(status[1] ?? status[2]) : null, message: text };
}

export class AcpTranslator {
  private stepOpen = false;
  private text = "";
  private reasoning = "";
  private parts = 0;
  private readonly tools = new Map<string, ToolCall>();
  private costUsd = 0;
  /** Qwen Code's usage, per model call in a message chunk's _meta: summed for the turn. */
  private chunkUsage: Required<Pick<AcpUsage, "inputTokens" | "outputTokens" | "totalTokens">> & {
    thoughtTokens: number;
    cachedReadTokens: number;
  } = { inputTokens: 0, outputTokens: 0, totalTokens: 0, thoughtTokens: 0, cachedReadTokens: 0 };
  private sawChunkUsage = false;
  /** Copilot CLI's notice, while it is the last thing the agent said. */
  private notice: string | null = null;

  /** `agent`: the name the agent gave in `initialize` (Copilot CLI's notices are read by it). */
  constructor(
    private readonly sessionId: string,
    private readonly agent: string | null = null,
  ) {}

  private line(type: string, fields: Json): Json {
    return { type, sessionID: this.sessionId, timestamp: Date.now(), ...fields };
  }

  private partId(): string {
    return `acp_part_${++this.parts}`;
  }

  private open(): Json[] {
    if (this.stepOpen) return [];
    this.stepOpen = true;
    return [this.line("step_start", { part: { id: this.partId(), type: "step-start" } })];
  }

  private addChunkUsage(update: Json): void {
    const meta = isObject(update._meta) ? update._meta : null;
    const usage = meta && isObject(meta.usage) ? meta.usage : null;
    if (!usage) return;
    this.sawChunkUsage = true;
    for (const key of Object.keys(this.chunkUsage) as (keyof typeof this.chunkUsage)[]) {
      const value = usage[key];
      if (typeof value === "number") this.chunkUsage[key] += value;
    }
  }

  /** The text and reasoning written so far, passed on whole. */
  private flush(): Json[] {
    const out: Json[] = [];
    if (this.reasoning !== "") {
      out.push(this.line("reasoning", { part: { id: this.partId(), type: "reasoning", text: this.reasoning } }));
      this.reasoning = "";
    }
    if (this.text !== "") {
      out.push(this.line("text", { part: { id: this.partId(), type: "text", text: this.text } }));
      this.text = "";
    }
    return out;
  }

  update(update: Json): Json[] {
    switch (str(update.sessionUpdate)) {
      case "agent_message_chunk": {
        this.addChunkUsage(update);
        const content = isObject(update.content) ? update.content : null;
        if (content?.type !== "text" || typeof content.text !== "string") return [];
        // Copilot CLI's notice is a message of its own, apart from the model's text around it.
        const notice = this.agent === "Copilot" && COPILOT_NOTICE.test(content.text);
        const out = [...this.open(), ...(notice || this.notice !== null ? this.flush() : [])];
        this.notice = notice ? content.text : null;
        this.text += content.text;
        return out;
      }
      case "agent_thought_chunk": {
        const content = isObject(update.content) ? update.content : null;
        if (content?.type !== "text" || typeof content.text !== "string") return [];
        this.reasoning += content.text;
        return this.open();
      }
      case "tool_call":
      case "tool_call_update":
        return this.tool(update);
      case "usage_update": {
        const cost = isObject(update.cost) ? update.cost : null;
        if (cost && cost.currency === "USD" && typeof cost.amount === "number") this.costUsd = cost.amount;
        return [];
      }
      default:
        // plan, available_commands_update, current_mode_update, config_option_update, user chunks.
        return [];
    }
  }

  private tool(update: Json): Json[] {
    const id = str(update.toolCallId);
    if (!id) return [];
    this.notice = null;
    let call = this.tools.get(id);
    if (!call) {
      call = { tool: toolName(update), input: {}, started: false, done: false };
      this.tools.set(id, call);
    }
    if (isObject(update.rawInput)) {
      const input = Object.fromEntries(Object.entries(update.rawInput).filter(([key]) => !NOT_INPUT.has(key)));
      // A command given as words is one line, as opencode's bash input has it.
      if (Array.isArray(input.command)) input.command = commandLine(input.command);
      call.input = { ...call.input, ...input };
    } else if (call.tool === "bash" && call.input.command === undefined) {
      const command = commandOf(update, {});
      if (command) call.input = { command };
    }
    const status = str(update.status);
    const out = [...this.open(), ...this.flush()];
    if (call.done) return out;
    const part = (state: Json) => ({ id: this.partId(), type: "tool", callID: id, tool: call.tool, state });
    if (status === "completed" || status === "failed") {
      call.done = true;
      const raw = isObject(update.rawOutput) ? update.rawOutput : null;
      // The raw output: opencode's {output}, codex-acp's {aggregated_output} (a command's stdout and
      // stderr as they came) or {stdout} (an edit's), Copilot CLI's {content} (what the model is
      // told), claude-agent-acp's string; else the content's text.
      const text =
        str(raw?.output) ??
        str(raw?.aggregated_output) ??
        str(raw?.stdout) ??
        str(raw?.content) ??
        str(update.rawOutput) ??
        contentText(update.content) ??
        "";
      // A failure's words: {error}, or Copilot CLI's {message} ("The user rejected this tool call.").
      const failure = str(raw?.error) ?? str(raw?.message) ?? (text || "the tool call failed");
      const state =
        status === "completed"
          ? { status: "completed", input: call.input, output: text, title: str(update.title) ?? call.tool }
          : { status: "error", input: call.input, error: failure };
      out.push(this.line("tool_use", { part: part(state) }));
    } else if (!call.started) {
      call.started = true;
      out.push(this.line("tool_use", { part: part({ status: "running", input: call.input }) }));
    }
    return out;
  }

  /**
   * A permission the agent asked for and oc-exec refused: the line the normalizer pairs with the
   * tool call's failure. The key is opencode's name for the tool's kind; the patterns, what it touches.
   */
  refused(toolCall: Json): Json[] {
    const { key, patterns } = permissionOf(toolCall);
    return [
      ...this.open(),
      ...this.flush(),
      this.line("permission_rejected", { permission: key, patterns, callID: str(toolCall.toolCallId) }),
    ];
  }

  /**
   * The prompt's response: the step closed with its usage, and how the turn stopped. Copilot CLI
   * ends a failed turn as any other, with its "Error: " notice last and no usage told: that turn
   * failed, with the error its notice words (a turn the model answered tells its usage).
   */
  finish(stopReason: string, told: AcpUsage | null): Json[] {
    if (told === null && this.notice?.startsWith("Error: ")) {
      const { status, message } = copilotError(this.notice);
      this.text = this.text.slice(0, -this.notice.length);
      this.notice = null;
      return [
        ...this.open(),
        ...this.error({
          code: -32603,
          message,
          ...(status !== null ? { data: { details: `${status} ${message}` } } : {}),
        }),
      ];
    }
    const usage: AcpUsage | null = told ?? (this.sawChunkUsage ? this.chunkUsage : null);
    const reason =
      stopReason === "end_turn" ? "stop" : stopReason === "max_tokens" ? "length" : stopReason.replace(/_/g, "-");
    const tokens = {
      input: usage?.inputTokens ?? 0,
      output: usage?.outputTokens ?? 0,
      reasoning: usage?.thoughtTokens ?? 0,
      cache: { read: usage?.cachedReadTokens ?? 0, write: usage?.cachedWriteTokens ?? 0 },
      total: usage?.totalTokens ?? 0,
    };
    return [
      ...this.open(),
      ...this.flush(),
      this.line("step_finish", {
        part: { id: this.partId(), type: "step-finish", reason, tokens, cost: this.costUsd },
      }),
    ];
  }

  /**
   * The prompt failed. opencode names its error (`data.errorName`: APIError, ContextOverflowError);
   * an agent that uses an HTTP status as the code (gemini) gets it as the status; the rest, the text.
   */
  error(error: AcpError): Json[] {
    const data = isObject(error.data) ? error.data : {};
    const named = str(data.errorName);
    // Qwen Code: −32603 "Internal error" with the provider's "STATUS text" in data.details.
    const details = /^([45]\d\d) (.+)$/s.exec(str(data.details) ?? "");
    const codex = details ? null : codexError(data);
    const status =
      error.code >= 400 && error.code < 600 ? error.code : details ? Number(details[1]) : (codex?.status ?? null);
    const message = details
      ? details[2]!
      : (codex?.message ?? providerMessage(error.message.replace(/^Internal error: /, "")));
    // An agent that names no error but says the input does not fit (Claude Code: "Prompt is too long").
    const overflow = codex?.overflow || (named === null && status === null && OVERFLOW_TEXT.test(message));
    return [
      ...this.flush(),
      this.line("error", {
        error: {
          name: named ?? (overflow ? "ContextOverflowError" : status !== null ? "APIError" : "UnknownError"),
          data: { message, ...(status !== null ? { statusCode: status } : {}) },
        },
      }),
    ];
  }
}
