// The server's event stream, translated into the lines `opencode run --format json` prints, so that
// the one normalizer and classifier judge both backends. Pure: one SSE event in, what it means out.
//
// `opencode run` is itself a client of this stream and prints step_start, text, reasoning,
// tool_use, step_finish and error lines from it; this does the same for one session. The server
// shows what `run` cannot, and line types of oc-exec's own carry it (the normalizer knows them):
// `text_delta` (text as it is written), `retry` (a model call retried), `permission_rejected` (a
// permission oc-exec refused, with every pattern asked) and `question_rejected`. The step_finish
// line also gets a `model` field: the assistant message names the model that served it.
import { isObject, type Json, readNumber, readObject, readString } from "./upstream.js";

export type PermissionAsked = {
  id: string;
  permission: string;
  patterns: string[];
  callId: string | null;
};

export type QuestionAsked = { id: string; questions: string[]; callId: string | null };

export type Translated =
  | { kind: "line"; line: Json }
  | { kind: "permission"; request: PermissionAsked }
  | { kind: "question"; request: QuestionAsked }
  /** The session went idle: the turn is over. */
  | { kind: "idle" };

export type TranslatorOptions = { sessionId: string; deltas: boolean };

export class ServerTranslator {
  private readonly modelByMessage = new Map<string, string>();
  private readonly partType = new Map<string, string>();
  /** Parts already passed on whole (text, reasoning, steps), and tool calls by the state shown. */
  private readonly done = new Set<string>();
  private readonly toolState = new Map<string, string>();
  private aborting = false;
  /** Requests asked, by id, until their answer shows which were refused. */
  private readonly asked = new Map<string, PermissionAsked | QuestionAsked>();
  /** The turn's own prompt was accepted (the session went busy): an idle before it is a previous turn's. */
  private busy = false;

  constructor(private readonly options: TranslatorOptions) {}

  /** oc-exec aborted the session: the MessageAbortedError that follows is its own doing, not news. */
  expectAbort(): void {
    this.aborting = true;
  }

  translate(data: string): Translated[] {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return [];
    }
    if (!isObject(event)) return [];
    const type = readString(event, "type");
    const props = readObject(event, "properties");
    if (!type || !props) return [];
    if (readString(props, "sessionID") !== this.options.sessionId) return [];
    switch (type) {
      case "message.updated":
        return this.messageUpdated(readObject(props, "info"));
      case "message.part.updated":
        return this.partUpdated(readObject(props, "part"));
      case "message.part.delta":
        return this.delta(props);
      case "session.status":
        return this.status(readObject(props, "status"));
      case "session.idle":
        return this.busy || this.aborting ? [{ kind: "idle" }] : [];
      case "session.error":
        return this.error(readObject(props, "error"));
      case "permission.asked":
        return this.permission(props);
      case "question.asked":
        return this.question(props);
      // The answers, whoever gave them: a refusal becomes a line the normalizer pairs with the tool.
      case "permission.replied":
        return readString(props, "reply") === "reject" ? this.refused(readString(props, "requestID")) : [];
      case "question.rejected":
        return this.refused(readString(props, "requestID"));
      default:
        return [];
    }
  }

  private line(type: string, fields: Json): Translated {
    return { kind: "line", line: { type, sessionID: this.options.sessionId, ...fields } };
  }

  private messageUpdated(info: Json | null): Translated[] {
    const id = readString(info, "id");
    const provider = readString(info, "providerID");
    const model = readString(info, "modelID");
    if (id && readString(info, "role") === "assistant" && provider && model)
      this.modelByMessage.set(id, `${provider}/${model}`);
    return [];
  }

  private partUpdated(part: Json | null): Translated[] {
    const id = readString(part, "id");
    const type = readString(part, "type");
    if (!part || !id || !type) return [];
    this.partType.set(id, type);
    switch (type) {
      case "step-start":
        return this.once(id, () => this.line("step_start", { part }));
      case "step-finish": {
        const messageId = readString(part, "messageID");
        const model = messageId ? (this.modelByMessage.get(messageId) ?? null) : null;
        return this.once(id, () => this.line("step_finish", { part, model }));
      }
      case "text":
      case "reasoning":
        // Updated as it grows; passed on once, when it is complete.
        if (readNumber(readObject(part, "time"), "end") === null) return [];
        return this.once(id, () => this.line(type, { part }));
      case "tool":
        return this.tool(id, part);
      default:
        return [];
    }
  }

  private once(id: string, make: () => Translated): Translated[] {
    if (this.done.has(id)) return [];
    this.done.add(id);
    return [make()];
  }

  private tool(id: string, part: Json): Translated[] {
    const status = readString(readObject(part, "state"), "status");
    if (!status || this.toolState.get(id) === status) return [];
    const previous = this.toolState.get(id);
    this.toolState.set(id, status);
    // pending and running: the first sign of a tool (for progress); completed or error: the call.
    if ((status === "pending" || status === "running") && previous !== undefined) return [];
    return [this.line("tool_use", { part })];
  }

  private delta(props: Json): Translated[] {
    if (!this.options.deltas || readString(props, "field") !== "text") return [];
    const partId = readString(props, "partID");
    const delta = readString(props, "delta");
    if (!partId || delta === null || delta === "" || this.partType.get(partId) !== "text") return [];
    return [this.line("text_delta", { partID: partId, messageID: readString(props, "messageID"), delta })];
  }

  private status(status: Json | null): Translated[] {
    const type = readString(status, "type");
    if (type === "busy") this.busy = true;
    if (type !== "retry") return [];
    return [
      this.line("retry", {
        attempt: readNumber(status, "attempt"),
        message: readString(status, "message"),
        next: readNumber(status, "next"),
      }),
    ];
  }

  private error(error: Json | null): Translated[] {
    if (!error) return [];
    if (this.aborting && readString(error, "name") === "MessageAbortedError") return [];
    return [this.line("error", { error })];
  }

  private permission(props: Json): Translated[] {
    const id = readString(props, "id");
    if (!id) return [];
    const patterns = Array.isArray(props.patterns) ? props.patterns.filter((p) => typeof p === "string") : [];
    const request: PermissionAsked = {
      id,
      permission: readString(props, "permission") ?? "unknown",
      patterns,
      callId: readString(readObject(props, "tool"), "callID"),
    };
    this.asked.set(id, request);
    return [{ kind: "permission", request }];
  }

  private question(props: Json): Translated[] {
    const id = readString(props, "id");
    if (!id) return [];
    const questions = Array.isArray(props.questions)
      ? props.questions.map((q) => readString(q, "question") ?? readString(q, "header") ?? "").filter((q) => q !== "")
      : [];
    const request: QuestionAsked = { id, questions, callId: readString(readObject(props, "tool"), "callID") };
    this.asked.set(id, request);
    return [{ kind: "question", request }];
  }

  private refused(requestId: string | null): Translated[] {
    const request = requestId ? this.asked.get(requestId) : undefined;
    if (!request) return [];
    this.asked.delete(request.id);
    if ("questions" in request)
      return [this.line("question_rejected", { questions: request.questions, callID: request.callId })];
    return [
      this.line("permission_rejected", {
        permission: request.permission,
        patterns: request.patterns,
        callID: request.callId,
      }),
    ];
  }
}
