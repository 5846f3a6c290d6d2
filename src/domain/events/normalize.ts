// The normalizer: opencode's stdout and stderr lines in, oc-exec event drafts out, plus the facts
// the classifier needs when the turn ends (turn-facts.ts). Pure: no I/O and no clock; the emitter
// stamps seq, time and session_id. Three ideas live in parts of their own: pairing a denied tool
// with its notice across the two pipes (permission-pairing.ts), errors that wait for their cause
// or were recovered from (error-ledger.ts), and what stderr tells the classifier (stderr-record.ts).
import type { EventDraft, PermissionDenial, Usage } from "../../contract/schema.js";
import { addUsage } from "../../contract/usage.js";
import type { WarningCode } from "../../contract/warning-codes.js";
import { formatDuration } from "../../kernel/duration.js";
import { ErrorLedger } from "./error-ledger.js";
import { type LogFact, logFactOf } from "./log-lines.js";
import { PermissionPairing } from "./permission-pairing.js";
import { redact, redactValue } from "./redact.js";
import { parsePermissionNotice, parsePermissionPrompt, parseStderrLine } from "./stderr-lines.js";
import { clip, StderrRecord } from "./stderr-record.js";
import { runningToolOf, toolEventOf } from "./tool-event.js";
import { fileChangesOf } from "./tool-files.js";
import { createTurnFacts, type TurnFacts } from "./turn-facts.js";
import { type Json, parseUpstreamLine, readCost, readCount, readNumber, readObject, readString } from "./upstream.js";
import type { UpstreamError } from "./upstream-error.js";

export type NormalizerOptions = {
  workspace: string;
  /** The session asked for, if any. */
  session: string | null;
  /** The most recent session is resumed, whose id we learn from opencode. */
  continue?: boolean;
  /** opencode runs a new session forked from the resumed one, so its id differs. */
  fork?: boolean;
  maxOutputBytes: number;
  maxLineBytes?: number;
  /**
   * The permission keys oc-exec's own policy removed whole ("*": all): a call to such a tool comes
   * back as opencode's `invalid` tool and is the policy's denial. Any other unavailable tool is a
   * warning. Default: none (a replay knows no policy).
   */
  removedByPolicy?: ReadonlySet<string>;
  /** Called at the first sign that a tool started (a pending or running tool part). */
  onToolStarted?: (tool: string, callId: string | null) => void;
};

export type LineMeta = { truncated?: boolean; bytes?: number };

type Emit = (draft: EventDraft) => void;

const WARNING_TEXT_CHARS = 500;

export class Normalizer {
  // Joined when read, not per part: a message with thousands of parts must not cost O(n²).
  readonly facts: TurnFacts = createTurnFacts(() => this.lastTextParts);

  private stepOpen = false;
  /** The step during which the last text part arrived (0: none yet). */
  private lastTextStep = 0;
  /** From opencode's log: the message a model call writes to, and the model each message used. */
  private currentMessage: string | null = null;
  private readonly modelByMessage = new Map<string, string>();
  /** A model call that failed and may be retried; the retries counted per message. */
  private failedCall: { messageId: string | null; cause: string; at: number | null } | null = null;
  private readonly retries = new Map<string | null, number>();
  private lastTextMessage: string | null = null;
  private lastTextParts: string[] = [];
  private readonly pairing = new PermissionPairing();
  private readonly stderr = new StderrRecord(this.facts);
  private readonly ledger = new ErrorLedger();

  constructor(
    private readonly options: NormalizerOptions,
    private readonly emit: Emit,
  ) {}

  /** A warning event, counted in result.stream; also for warnings from outside opencode's streams. */
  warning(code: WarningCode, message: string): void {
    this.facts.stream.warnings++;
    this.emit({ type: "warning", code, message: redact(message) });
  }

  stdoutLine(text: string, meta: LineMeta = {}): void {
    if (meta.truncated) {
      this.facts.stream.other_lines++;
      this.warning(
        "line_too_long",
        `opencode printed a line of ${meta.bytes ?? "?"} bytes on stdout, over the ${this.options.maxLineBytes ?? "configured"}-byte limit; it was skipped. It began: ${clip(text, 200)}`,
      );
      return;
    }
    const line = parseUpstreamLine(text);
    switch (line.kind) {
      case "blank":
        this.facts.stream.blank_lines++;
        return;
      case "text": {
        this.facts.stream.other_lines++;
        // Some releases print the permission notice on stdout, between JSON lines.
        const notice = parsePermissionNotice(text);
        if (notice) return this.permissionNotice(notice.permission, notice.pattern);
        const prompt = parsePermissionPrompt(text);
        if (prompt) {
          // Releases before --auto draw an interactive prompt on stdout and wait for a key forever.
          this.facts.blockedOnPrompt = true;
          return this.permissionNotice(prompt.permission, prompt.pattern);
        }
        return this.warning(
          "non_json_line",
          `opencode printed a non-JSON line on stdout: ${clip(text.trim(), WARNING_TEXT_CHARS)}`,
        );
      }
      case "json-other":
        this.facts.stream.other_lines++;
        return this.warning(
          "non_object_json",
          `opencode printed JSON that is not an event object: ${clip(text.trim(), WARNING_TEXT_CHARS)}`,
        );
      case "event":
        this.facts.stream.json_lines++;
        if (line.sessionId) this.sessionSeen(line.sessionId);
        return this.upstreamEvent(line.type, line.event);
    }
  }

  private sessionSeen(id: string): void {
    if (this.facts.sessionId !== null) return;
    this.facts.sessionId = id;
    const requested = this.options.session;
    if (requested && requested !== id && !this.options.fork) this.facts.sessionMismatch = { requested, reported: id };
    const resumed = (requested !== null && requested === id) || (this.options.continue === true && !this.options.fork);
    this.emit({ type: "session.started", resumed });
  }

  private upstreamEvent(type: string, event: Json): void {
    const part = readObject(event, "part");
    switch (type) {
      case "step_start":
        this.facts.events++;
        // A model call went out again: whatever opencode was waiting to retry, it is over.
        this.facts.waitingToRetry = null;
        this.stepOpen = true;
        this.facts.steps++;
        this.emit({ type: "step.started", step: this.facts.steps });
        return;
      case "step_finish":
        this.facts.events++;
        return this.stepFinish(event, part);
      case "text": {
        const text = readString(part, "text");
        if (text === null) return this.malformed(type, "part.text");
        this.facts.events++;
        this.textPart(readString(part, "messageID"), text);
        this.emit({ type: "message", text });
        return;
      }
      case "reasoning": {
        const text = readString(part, "text");
        if (text === null) return this.malformed(type, "part.text");
        this.facts.events++;
        this.emit({ type: "reasoning", text });
        return;
      }
      case "tool_use":
        if (!part || readString(part, "tool") === null) return this.malformed(type, "part.tool");
        this.facts.events++;
        return this.toolUse(part);
      case "error":
        this.facts.events++;
        return this.upstreamError(event);
      // Three line types of oc-exec's own, from the server backend's translation (domain/events/server-translate.ts).
      case "text_delta": {
        const delta = readString(event, "delta");
        if (delta === null) return this.malformed(type, "delta");
        this.facts.events++;
        this.emit({ type: "message.delta", text: delta, part_id: readString(event, "partID") });
        return;
      }
      case "retry":
        this.facts.events++;
        return this.serverRetry(event);
      case "permission_rejected": {
        this.facts.events++;
        const patterns = Array.isArray(event.patterns) ? event.patterns.filter((p) => typeof p === "string") : [];
        return this.permissionNotice(readString(event, "permission"), patterns[0] ?? null, patterns);
      }
      case "question_rejected": {
        this.facts.events++;
        const asked = Array.isArray(event.questions) ? event.questions.filter((q) => typeof q === "string") : [];
        this.warning(
          "question_rejected",
          `the agent asked a question nobody can answer in a headless turn; oc-exec rejected it${asked.length > 0 ? `: ${clip(asked.join(" / "), WARNING_TEXT_CHARS)}` : ""}`,
        );
        // opencode ends the turn on a rejected question, as on a rejected permission: the same class.
        return this.denial({
          permission: "question",
          pattern: asked[0] ?? null,
          tool: "question",
          call_id: readString(event, "callID"),
        });
      }
      case "done":
        // Newer sources end the stream with a `done` event; its facts are already ours.
        this.facts.events++;
        return;
      case "":
        // 2.x can print a bare error object with no type: {"name":"UnknownError","message":...}.
        if (readString(event, "message") !== null && /Error$/.test(readString(event, "name") ?? "")) {
          this.facts.events++;
          return this.upstreamError(event);
        }
        return this.unknownEvent("an object without a type", event);
      default:
        return this.unknownEvent(`event type ${JSON.stringify(type)}`, event);
    }
  }

  private unknownEvent(what: string, event: Json): void {
    const line = clip(JSON.stringify(redactValue(event)), WARNING_TEXT_CHARS);
    this.warning("unknown_event", `opencode printed ${what}, which oc-exec does not know; ignored: ${line}`);
  }

  private malformed(type: string, field: string): void {
    this.warning("malformed_event", `opencode ${type} event without a valid ${field}; ignored`);
  }

  private textPart(messageId: string | null, text: string): void {
    this.lastTextStep = this.facts.steps;
    // The final message is every text part of the last assistant message that had text.
    if (messageId === null || messageId !== this.lastTextMessage) {
      this.lastTextMessage = messageId;
      this.lastTextParts = [];
    }
    this.lastTextParts.push(text);
  }

  private stepFinish(event: Json, part: Json | null): void {
    if (!this.stepOpen) {
      // A step_finish with no step_start: count it anyway so steps and usage stay consistent.
      this.facts.steps++;
    }
    this.stepOpen = false;
    const tokens = readObject(part, "tokens");
    const cache = readObject(tokens, "cache");
    const usage: Usage = {
      input: readCount(tokens, "input"),
      output: readCount(tokens, "output"),
      reasoning: readCount(tokens, "reasoning"),
      cache_read: readCount(cache, "read"),
      cache_write: readCount(cache, "write"),
      total: readCount(tokens, "total"),
    };
    if (usage.total === 0)
      usage.total = usage.input + usage.output + usage.reasoning + usage.cache_read + usage.cache_write;
    const cost = readCost(part, "cost");
    addUsage(this.facts.usage, usage);
    this.facts.costUsd += cost;
    const reason = readString(part, "reason");
    this.facts.lastStepReason = reason;
    // The model that served this step, when opencode's log named it (the log comes on the other pipe,
    // usually well before the step ends; failing that, the model of the latest call).
    // On the server backend the assistant message itself names the model (the line's `model`).
    const named = readString(event, "model");
    if (named) this.facts.model = named;
    const messageId = readString(part, "messageID");
    const model = named ?? (messageId ? this.modelByMessage.get(messageId) : undefined) ?? this.facts.model;
    this.emit({ type: "step.finished", step: this.facts.steps, reason, usage, cost_usd: cost, model });
  }

  private toolUse(part: Json): void {
    const running = runningToolOf(part);
    if (running) return this.options.onToolStarted?.(running.tool, running.callId);
    const removed = this.options.removedByPolicy;
    const built = toolEventOf(
      part,
      this.options.maxOutputBytes,
      (permission) => removed?.has(permission) === true || removed?.has("*") === true,
    );
    if (!built) return;
    const { draft, state, ruleDenial, unavailable } = built;
    this.facts.tools.total++;
    if (draft.status === "error") {
      this.facts.tools.failed++;
      if (this.facts.failedTools.length < 5)
        this.facts.failedTools.push({ tool: draft.tool, callId: draft.call_id, error: draft.error });
    }
    if (draft.status === "denied") this.facts.tools.denied++;
    this.emit(draft);
    if (unavailable)
      this.warning(
        "unavailable_tool",
        `the model called ${unavailable}, a tool this agent does not offer, and opencode answered that it is unavailable; no rule of oc-exec's policy removed it, so this is not a denial: the turn is judged by how it ends`,
      );
    if (ruleDenial) this.denial({ ...ruleDenial, tool: draft.tool, call_id: draft.call_id }, true);
    else if (draft.status === "denied") this.deniedTool(draft.tool, draft.call_id);
    if (draft.status === "completed") {
      for (const change of fileChangesOf(
        this.options.workspace,
        draft.tool,
        state?.input,
        readObject(state, "metadata"),
      )) {
        const seen = this.facts.filesChanged.find((c) => c.path === change.path);
        if (seen) {
          // added then edited is still added; anything then deleted is deleted.
          if (change.change === "deleted") seen.change = "deleted";
        } else this.facts.filesChanged.push(change);
        this.emit({ type: "file.changed", ...change });
      }
    }
  }

  private deniedTool(tool: string, callId: string | null): void {
    const paired = this.pairing.deniedTool(tool, callId);
    if (paired) this.denial(paired);
  }

  private permissionNotice(permission: string | null, pattern: string | null, patterns?: string[]): void {
    const paired = this.pairing.notice(permission, pattern, patterns);
    if (paired) this.denial(paired);
  }

  private denial(d: PermissionDenial, byPolicy = false): void {
    const clean = {
      ...d,
      pattern: d.pattern === null ? null : redact(d.pattern),
      ...(d.patterns ? { patterns: d.patterns.map(redact) } : {}),
    };
    this.facts.permissionDenials.push(clean);
    if (byPolicy) this.facts.policyDenied.add(clean);
    this.emit({ type: "permission.denied", ...clean });
  }

  private upstreamError(event: Json): void {
    const complete = this.ledger.upstream(event, this.facts.steps);
    if (complete) this.recordError(complete);
  }

  private recordError(error: UpstreamError): void {
    this.facts.errors.push(error);
    this.emit({
      type: "error",
      class: error.class,
      name: error.name,
      message: error.message,
      status_code: error.statusCode,
      retryable: error.retryable,
    });
  }

  stderrLine(raw: string): void {
    const line = parseStderrLine(raw);
    switch (line.kind) {
      case "blank":
        return;
      case "permission":
        return this.permissionNotice(line.permission, line.pattern);
      case "agent-fallback":
        this.stderr.tail(line.text);
        return this.warning("agent_fallback", line.text);
      case "log": {
        const fact = logFactOf(line.fields);
        return fact ? this.logFact(fact, line.fields.timestamp) : undefined;
      }
      case "error":
        this.stderr.configLine(line.message);
        return this.stderr.tail(`Error: ${line.message}`, true);
      case "other":
        this.errorDump(line.text);
        this.stderr.configLine(line.text);
        return this.stderr.tail(line.text);
    }
  }

  private logFact(fact: LogFact, timestamp: string | undefined): void {
    switch (fact.kind) {
      case "cause": {
        const complete = this.ledger.cause(fact.ref, fact.error);
        return complete ? this.recordError(complete) : undefined;
      }
      case "process":
        this.currentMessage = fact.messageId;
        // The first model call is the turn's own session's (a subagent's come later).
        this.facts.logSessionId ??= fact.sessionId;
        return;
      case "model": {
        this.facts.model = fact.model;
        if (this.currentMessage) this.modelByMessage.set(this.currentMessage, fact.model);
        this.facts.waitingToRetry = null;
        const failed = this.failedCall;
        if (failed && failed.messageId === this.currentMessage) {
          // The same message is asked again: opencode is retrying the failed call.
          this.failedCall = null;
          const attempt = (this.retries.get(failed.messageId) ?? 0) + 1;
          this.retries.set(failed.messageId, attempt);
          const now = timestamp ? Date.parse(timestamp) : Number.NaN;
          const waited = failed.at !== null && !Number.isNaN(now) ? ` after ${formatDuration(now - failed.at)}` : "";
          this.warning(
            "api_retry",
            `opencode retried the model call (retry ${attempt})${waited}: ${redact(failed.cause)}`,
          );
        }
        return;
      }
      case "stream-error":
        this.failedCall = { messageId: this.currentMessage, cause: fact.cause, at: fact.at };
        this.facts.waitingToRetry = { cause: redact(fact.cause), until: null };
        return;
      case "permission":
        return this.options.onToolStarted?.(fact.permission, null);
      case "mcp-unavailable":
        if (this.facts.mcpUnavailable.includes(fact.name)) return;
        this.facts.mcpUnavailable.push(fact.name);
        return this.warning(
          "mcp_unavailable",
          `MCP server ${redact(fact.name)} did not start${fact.status ? ` (${redact(fact.status)})` : ""}: the turn ran without its tools (--fail-on mcp-unavailable makes this a failure)`,
        );
    }
  }

  /** The server's session.status "retry": opencode waits, then calls the model again. */
  private serverRetry(event: Json): void {
    const attempt = readNumber(event, "attempt");
    const next = readNumber(event, "next");
    // `next` is when opencode will try again (epoch ms); the normalizer has no clock to make it a wait.
    const wait = next !== null && next > 1e12 && next < 1e14 ? ` at ${new Date(next).toISOString()}` : "";
    const cause = readString(event, "message") ?? "no reason given";
    this.facts.waitingToRetry = { cause: redact(cause), until: wait ? next : null };
    this.warning(
      "api_retry",
      `opencode will retry the model call${attempt !== null ? ` (retry ${attempt})` : ""}${wait}: ${redact(cause)}`,
    );
  }

  private errorDump(text: string): void {
    const complete = this.ledger.dumpLine(text);
    if (complete) this.recordError(complete);
  }

  /** An error followed by a later step that answered was retried past: a warning, not the outcome. */
  private settleErrors(): void {
    const recovered = this.ledger.recovered(this.facts.errors, this.lastTextStep);
    if (recovered.length === 0) return;
    this.facts.errors = this.facts.errors.filter((e) => !recovered.includes(e));
    this.facts.recoveredErrors.push(...recovered);
    for (const e of recovered) {
      this.warning(
        "recovered_error",
        `opencode reported ${e.name}${e.statusCode !== null ? ` (HTTP ${e.statusCode})` : ""}: ${e.message}, then went on and answered in a later step; the turn is judged by that answer`,
      );
    }
  }

  /**
   * An attempt failed and another follows (--retry): what decides the class starts over, so only
   * the last attempt decides it. What the turn used (steps, usage, cost, tools, files) goes on
   * adding up; the failed attempt's errors stay in its events.
   */
  newAttempt(): void {
    const f = this.facts;
    f.errors = [];
    f.recoveredErrors = [];
    f.cutOff = null;
    f.lastStepReason = null;
    f.stderrErrors = [];
    f.stderrConfigError = false;
    f.stderrConfigLines = [];
    f.blockedOnPrompt = false;
    f.stderrTail = [];
    f.events = 0;
    f.sessionMismatch = null;
    f.waitingToRetry = null;
    this.stepOpen = false;
    this.failedCall = null;
    this.lastTextStep = f.steps;
  }

  /** Both streams have ended: emit whatever was still waiting for a partner. */
  finish(): void {
    for (const error of this.ledger.flush()) this.recordError(error);
    this.settleErrors();
    if (this.lastTextStep < this.facts.steps || this.facts.steps === 0) {
      // No text since the last step started: did the stream stop mid-turn?
      if (this.stepOpen) this.facts.cutOff = { step: this.facts.steps, afterTools: false };
      else if (this.facts.lastStepReason === "tool-calls")
        this.facts.cutOff = { step: this.facts.steps, afterTools: true };
    }
    for (const denial of this.pairing.flush()) this.denial(denial);
  }
}
