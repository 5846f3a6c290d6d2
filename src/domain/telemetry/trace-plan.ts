// A run's trace, planned from its event stream: the spans, their parents, times and attributes,
// named as OpenTelemetry's GenAI semantic conventions name them. Pure: events in, a span tree out,
// tested without the SDK or a collector; export-trace.ts hands the tree to the SDK.
//
// The turn is an `invoke_agent` span; each model step a `chat` span below it and each tool call an
// `execute_tool` span beside the steps (a tool runs between two model calls, as the conventions
// draw it); a batch is a span with a task's turn below it, a conversation a span with a turn's.
// Times are the events' own: a span starts and ends when the events that open and close it were
// written, and a tool, which is reported once it is done, starts its duration_ms before that (not
// before the step that called it).
import type { EventOf, OcEvent } from "../../contract/schema.js";

export type SpanAttributes = Record<string, string | number | boolean | string[]>;

export type PlannedSpan = {
  name: string;
  /** A model call is a client span (the conventions' kind for it); the rest run inside oc-exec. */
  kind: "internal" | "client";
  startMs: number;
  endMs: number;
  attributes: SpanAttributes;
  /** The error status's message; null: not an error. */
  error: string | null;
  /** Things that happened within the span without a span of their own (a retry). */
  events: { name: string; timeMs: number; attributes: SpanAttributes }[];
  children: PlannedSpan[];
};

type TurnKey = string;

/** A turn's spans while its events come in. */
type OpenTurn = {
  span: PlannedSpan;
  requestModel: string | null;
  step: PlannedSpan | null;
  lastMs: number;
  text: string | null;
};

const providerOf = (model: string | null | undefined) => (model ? model.slice(0, model.indexOf("/")) : null);
const ms = (time: string) => Date.parse(time);

function span(name: string, startMs: number, attributes: SpanAttributes, kind: PlannedSpan["kind"] = "internal") {
  return { name, kind, startMs, endMs: startMs, attributes, error: null, events: [], children: [] } as PlannedSpan;
}

/** Sets only the attributes that have a value: an absent fact is no attribute, never "null". */
function set(
  attributes: SpanAttributes,
  values: Record<string, string | number | boolean | string[] | null | undefined>,
) {
  for (const [key, value] of Object.entries(values)) if (value !== null && value !== undefined) attributes[key] = value;
}

export class TracePlan {
  private readonly turns = new Map<TurnKey, OpenTurn>();
  /** The turns, in the order they started. */
  private readonly order: PlannedSpan[] = [];
  private group: PlannedSpan | null = null;
  private firstMs: number | null = null;

  constructor(private readonly options: { captureContent: boolean }) {}

  observe(event: OcEvent): void {
    const at = ms(event.time);
    this.firstMs ??= at;
    if (event.type === "batch.result" || event.type === "conversation.result") return this.closeGroup(event, at);
    const key: TurnKey = `${event.task_id ?? ""}\u0000${event.turn ?? ""}`;
    if (event.type === "run.started") return this.open(key, event, at);
    const turn = this.turns.get(key);
    if (!turn) return;
    turn.lastMs = at;
    switch (event.type) {
      case "step.started":
        turn.step = this.chat(turn, at);
        break;
      case "step.finished": {
        const step = turn.step ?? this.chat(turn, turn.span.children.at(-1)?.endMs ?? turn.span.startMs);
        step.endMs = at;
        set(step.attributes, {
          "gen_ai.response.model": event.model?.slice(event.model.indexOf("/") + 1),
          "gen_ai.provider.name": providerOf(event.model ?? turn.requestModel),
          "gen_ai.usage.input_tokens": event.usage.input,
          "gen_ai.usage.output_tokens": event.usage.output,
          "gen_ai.response.finish_reasons": event.reason ? [event.reason] : null,
          "oc_exec.cost_usd": event.cost_usd,
          "oc_exec.step": event.step,
        });
        turn.step = null;
        break;
      }
      case "tool":
        turn.span.children.push(this.tool(event, at, turn.step?.startMs ?? turn.span.startMs));
        break;
      case "message":
        turn.text = event.text;
        break;
      case "retry":
        turn.span.events.push({
          name: "oc_exec.retry",
          timeMs: at,
          attributes: {
            "oc_exec.failed_attempt": event.failed_attempt,
            "oc_exec.class": event.class,
            "error.type": event.name,
            "oc_exec.wait_ms": event.wait_ms,
          },
        });
        break;
      case "verify.finished": {
        const check = span("oc_exec.verify", at - event.duration_ms, {
          "oc_exec.verify.command": event.command,
          "oc_exec.verify.round": event.round,
        });
        check.endMs = at;
        set(check.attributes, { "oc_exec.verify.exit_code": event.exit_code });
        if (!event.passed) check.error = event.timed_out ? "timed out" : `exit ${event.exit_code ?? event.signal}`;
        turn.span.children.push(check);
        break;
      }
      case "result":
        this.close(key, turn, event, at);
        break;
    }
  }

  /** The planned trace: one root span (the turn, the batch or the conversation), or none. */
  roots(): PlannedSpan[] {
    // A turn still open (a stream cut short) ends at its last event, as an error.
    for (const turn of this.turns.values()) {
      turn.span.endMs = turn.lastMs;
      turn.span.error ??= "the turn's stream ended without a result";
    }
    this.turns.clear();
    if (this.group) {
      // A batch or conversation cut short (no summary line) ends with its last turn.
      if (this.group.endMs === this.group.startMs)
        this.group.endMs = Math.max(this.group.startMs, ...this.group.children.map((c) => c.endMs));
      return [this.group];
    }
    return this.order;
  }

  private open(key: TurnKey, event: EventOf<"run.started">, at: number) {
    const agent = event.agent;
    const root = span(agent ? `invoke_agent ${agent}` : "invoke_agent", at, {
      "gen_ai.operation.name": "invoke_agent",
    });
    set(root.attributes, {
      "gen_ai.agent.name": agent,
      "gen_ai.request.model": event.model?.slice(event.model.indexOf("/") + 1),
      "gen_ai.provider.name": providerOf(event.model),
      "oc_exec.task_id": event.task_id,
      "oc_exec.turn": event.turn,
      "oc_exec.opencode.version": event.opencode.version,
      "oc_exec.opencode.host": event.opencode.host,
    });
    this.turns.set(key, { span: root, requestModel: event.model, step: null, lastMs: at, text: null });
    this.order.push(root);
    if (event.task_id !== undefined || event.turn !== undefined) {
      this.group ??= span(
        event.task_id !== undefined ? "oc_exec.batch" : "oc_exec.conversation",
        this.firstMs ?? at,
        {},
      );
      this.group.children.push(root);
    }
  }

  private chat(turn: OpenTurn, at: number): PlannedSpan {
    const model = turn.requestModel;
    const step = span(
      model ? `chat ${model.slice(model.indexOf("/") + 1)}` : "chat",
      at,
      { "gen_ai.operation.name": "chat" },
      "client",
    );
    set(step.attributes, {
      "gen_ai.request.model": model?.slice(model.indexOf("/") + 1),
      "gen_ai.provider.name": providerOf(model),
    });
    turn.span.children.push(step);
    return step;
  }

  private tool(event: EventOf<"tool">, at: number, floor: number): PlannedSpan {
    // Its duration is opencode's clock and its event oc-exec's: when opencode's lines arrive
    // together, the difference could put the call before the step that made it.
    const call = span(`execute_tool ${event.tool}`, Math.max(floor, at - (event.duration_ms ?? 0)), {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": event.tool,
      "gen_ai.tool.type": "function",
      "oc_exec.tool.status": event.status,
    });
    call.endMs = at;
    set(call.attributes, { "gen_ai.tool.call.id": event.call_id });
    if (event.status !== "completed") {
      call.error = event.status === "denied" ? "permission denied" : (event.error ?? "the tool failed");
      call.attributes["error.type"] = event.status === "denied" ? "denied" : "tool_error";
    }
    // Tool arguments and results are content: the conventions' opt-in, as for messages.
    if (this.options.captureContent)
      set(call.attributes, {
        "gen_ai.tool.call.arguments": JSON.stringify(event.input ?? null),
        "gen_ai.tool.call.result": event.output,
      });
    return call;
  }

  private close(key: TurnKey, turn: OpenTurn, result: EventOf<"result">, at: number) {
    const root = turn.span;
    root.endMs = at;
    set(root.attributes, {
      "gen_ai.conversation.id": result.session_id,
      "gen_ai.response.model": result.model?.slice(result.model.indexOf("/") + 1),
      "gen_ai.provider.name": root.attributes["gen_ai.provider.name"] ?? providerOf(result.model),
      "gen_ai.usage.input_tokens": result.usage.input,
      "gen_ai.usage.output_tokens": result.usage.output,
      "oc_exec.class": result.class,
      "oc_exec.exit_code": result.exit_code,
      "oc_exec.cost_usd": result.cost_usd,
      "oc_exec.steps": result.steps,
      "oc_exec.attempts": result.attempts,
    });
    if (result.class !== "success") {
      root.error = result.error?.message ?? result.class;
      set(root.attributes, { "error.type": result.class, "oc_exec.error.name": result.error?.name });
    }
    const text = result.text ?? turn.text;
    if (this.options.captureContent && text !== null)
      root.attributes["gen_ai.output.messages"] = JSON.stringify([
        { role: "assistant", parts: [{ type: "text", content: text }], finish_reason: "stop" },
      ]);
    // A step left open (the turn was stopped mid-call) ends with the turn.
    for (const child of root.children) if (child.endMs < child.startMs || child === turn.step) child.endMs = at;
    this.turns.delete(key);
  }

  private closeGroup(event: EventOf<"batch.result"> | EventOf<"conversation.result">, at: number) {
    this.group ??= span(
      event.type === "batch.result" ? "oc_exec.batch" : "oc_exec.conversation",
      this.firstMs ?? at,
      {},
    );
    this.group.endMs = at;
    set(this.group.attributes, {
      "oc_exec.exit_code": event.exit_code,
      "oc_exec.cost_usd": event.cost_usd,
      "gen_ai.usage.input_tokens": event.usage.input,
      "gen_ai.usage.output_tokens": event.usage.output,
    });
    if (!event.ok) this.group.error = `exit ${event.exit_code}`;
  }
}
