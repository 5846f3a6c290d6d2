// The trace's pure parts: which OTEL_* settings ask for a trace, the spans planned from a stream,
// the OTLP headers' values as secrets, and opencode's environment without OTEL_*.
import { describe, expect, it } from "vitest";
import type { OcEvent } from "../../src/contract/schema.js";
import { secretValues } from "../../src/domain/events/secrets.js";
import { buildEnv } from "../../src/domain/opencode/invocation.js";
import { type PlannedSpan, TracePlan } from "../../src/domain/telemetry/trace-plan.js";
import { headerValues, traceSettings } from "../../src/domain/telemetry/trace-settings.js";

describe("traceSettings", () => {
  const on = { protocol: "http/protobuf", captureContent: false, flushTimeoutMs: 5000 };
  it.each([
    [{}, null, null, "no OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER=otlp"],
    [
      { OTEL_SERVICE_NAME: "ci" },
      null,
      null,
      "no OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER=otlp",
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }, on, null],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" }, on, null],
    [{ OTEL_TRACES_EXPORTER: "otlp" }, on, null],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_SDK_DISABLED: "TRUE" }, null, null, "OTEL_SDK_DISABLED"],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_SDK_DISABLED: "false" }, on, null],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_TRACES_EXPORTER: "none" },
      null,
      null,
      "OTEL_TRACES_EXPORTER=none",
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
      { ...on, protocol: "http/json" },
      null,
    ],
    [
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      },
      { ...on, protocol: "http/json" },
      null,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" },
      { ...on, captureContent: true },
      null,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
      null,
      'OTLP protocol "grpc": oc-exec exports over http/protobuf or http/json (a collector\'s port 4318); no trace is exported',
    ],
    [
      { OTEL_TRACES_EXPORTER: "console" },
      null,
      "OTEL_TRACES_EXPORTER=console: oc-exec exports traces over OTLP only (stdout carries its events and nothing else); no trace is exported",
    ],
  ] as [NodeJS.ProcessEnv, unknown, string | null, string?][])("%j", (env, settings, problem, off) => {
    // Why it is off, only when it is off and nothing went wrong.
    expect(traceSettings(env)).toEqual({ settings, problem, ...(off ? { off } : {}) });
  });
});

describe("the OTLP headers and opencode's environment", () => {
  it("each header value is a secret, URL-encoded or not", () => {
    expect(headerValues("x-honeycomb-team=abc%20def123456,dd-api-key=plainvalue99,broken,empty=")).toEqual([
      "abc%20def123456",
      "abc def123456",
      "plainvalue99",
    ]);
    const values = secretValues({ OTEL_EXPORTER_OTLP_TRACES_HEADERS: "authorization=Basic%20dXNlcjpwYXNz,x=short" });
    expect(values).toContain("Basic%20dXNlcjpwYXNz");
    expect(values).toContain("Basic dXNlcjpwYXNz");
    expect(values).not.toContain("short");
  });

  it("no OTEL_* variable, TRACEPARENT or TRACESTATE reaches opencode", () => {
    const env = buildEnv({
      PATH: "/bin",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "k=v",
      TRACEPARENT: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      TRACESTATE: "a=b",
      MY_OTEL_NOTE: "kept",
    });
    expect(Object.keys(env).filter((k) => k.includes("OTEL") || k.startsWith("TRACE"))).toEqual(["MY_OTEL_NOTE"]);
  });
});

/** A stream's events with their times, as the emitter stamps them. */
function stamped(drafts: object[], start = Date.parse("2026-11-24T10:00:00.000Z")): OcEvent[] {
  return drafts.map(
    (d, i) => ({ seq: i, time: new Date(start + i * 1000).toISOString(), session_id: "ses_1", ...d }) as OcEvent,
  );
}

const usage = (input: number, output: number) => ({
  input,
  output,
  reasoning: 0,
  cache_read: 0,
  cache_write: 0,
  total: input + output,
});
const runStarted = (extra: object = {}) => ({
  type: "run.started",
  schema_version: 1,
  oc_exec_version: "0.1.0",
  opencode: { path: "/bin/opencode", version: "1.18.33" },
  cwd: "/w",
  model: "anthropic/claude-sonnet-4-5",
  agent: "build",
  resume: null,
  ...extra,
});
const result = (cls: string, exit: number, extra: object = {}) => ({
  type: "result",
  ok: cls === "success",
  exit_code: exit,
  class: cls,
  error: cls === "success" ? null : { name: "APIError", message: "Unauthorized", status_code: 401, retryable: false },
  model: "anthropic/claude-sonnet-4-5",
  text: cls === "success" ? "Done." : null,
  usage: usage(30, 7),
  cost_usd: 0.012,
  duration_ms: 9000,
  steps: 2,
  ...extra,
});

/** A span tree as [name, start offset s, end offset s, error, children]. */
type Shape = [string, number, number, string | null, Shape[]];
const shape = (span: PlannedSpan, t0: number): Shape => [
  span.name,
  (span.startMs - t0) / 1000,
  (span.endMs - t0) / 1000,
  span.error,
  span.children.map((c) => shape(c, t0)),
];
const T0 = Date.parse("2026-11-24T10:00:00.000Z");

describe("TracePlan", () => {
  const toolTurn = stamped([
    runStarted(),
    { type: "session.started", resumed: false },
    { type: "step.started", step: 1 },
    {
      type: "tool",
      call_id: "call_1",
      tool: "bash",
      status: "completed",
      input: { command: "ls" },
      output: "a.txt",
      output_truncated: false,
      error: null,
      title: "ls",
      duration_ms: 1500,
    },
    {
      type: "step.finished",
      step: 1,
      reason: "tool-calls",
      usage: usage(20, 5),
      cost_usd: 0.008,
      model: "anthropic/claude-sonnet-4-5",
    },
    { type: "step.started", step: 2 },
    { type: "message", text: "Done." },
    {
      type: "step.finished",
      step: 2,
      reason: "stop",
      usage: usage(10, 2),
      cost_usd: 0.004,
      model: "anthropic/claude-sonnet-4-5",
    },
    result("success", 0),
  ]);

  it("a tool turn: invoke_agent, a chat span per step, the tool beside them, its duration before its event (within its step)", () => {
    const plan = new TracePlan({ captureContent: false });
    for (const e of toolTurn) plan.observe(e);
    const [root] = plan.roots();
    expect(shape(root!, T0)).toEqual([
      "invoke_agent build",
      0,
      8,
      null,
      [
        ["chat claude-sonnet-4-5", 2, 4, null, []],
        ["execute_tool bash", 2, 3, null, []],
        ["chat claude-sonnet-4-5", 5, 7, null, []],
      ],
    ]);
    expect(root!.attributes).toEqual({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "build",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.conversation.id": "ses_1",
      "gen_ai.response.model": "claude-sonnet-4-5",
      "gen_ai.usage.input_tokens": 30,
      "gen_ai.usage.output_tokens": 7,
      "oc_exec.class": "success",
      "oc_exec.exit_code": 0,
      "oc_exec.cost_usd": 0.012,
      "oc_exec.steps": 2,
      "oc_exec.opencode.version": "1.18.33",
    });
    expect(root!.children[0]!.kind).toBe("client");
    expect(root!.children[0]!.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.response.model": "claude-sonnet-4-5",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.usage.input_tokens": 20,
      "gen_ai.usage.output_tokens": 5,
      "gen_ai.response.finish_reasons": ["tool-calls"],
      "oc_exec.cost_usd": 0.008,
      "oc_exec.step": 1,
    });
    expect(root!.children[1]!.attributes).toEqual({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "bash",
      "gen_ai.tool.type": "function",
      "gen_ai.tool.call.id": "call_1",
      "oc_exec.tool.status": "completed",
    });
    // No content without the opt-in.
    expect(JSON.stringify(root)).not.toContain("Done.");
  });

  it("with the opt-in: the final message on the turn, the tool's arguments and result on its span", () => {
    const plan = new TracePlan({ captureContent: true });
    for (const e of toolTurn) plan.observe(e);
    const [root] = plan.roots();
    expect(JSON.parse(String(root!.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "Done." }], finish_reason: "stop" },
    ]);
    expect(root!.children[1]!.attributes).toMatchObject({
      "gen_ai.tool.call.arguments": '{"command":"ls"}',
      "gen_ai.tool.call.result": "a.txt",
    });
  });

  it("a failed turn: the error status and class; a denied tool is an error span; a retry an event on the turn", () => {
    const plan = new TracePlan({ captureContent: false });
    for (const e of stamped([
      runStarted({ agent: null, model: null }),
      {
        type: "tool",
        call_id: null,
        tool: "edit",
        status: "denied",
        input: {},
        output: null,
        output_truncated: false,
        error: null,
        title: null,
        duration_ms: null,
      },
      {
        type: "retry",
        failed_attempt: 1,
        class: "api_error",
        name: "APIError",
        message: "overloaded",
        wait_ms: 2000,
        model: null,
        resumed: true,
      },
      result("api_error", 4, { attempts: 2 }),
    ]))
      plan.observe(e);
    const [root] = plan.roots();
    expect(shape(root!, T0)).toEqual([
      "invoke_agent",
      0,
      3,
      "Unauthorized",
      [["execute_tool edit", 1, 1, "permission denied", []]],
    ]);
    expect(root!.attributes).toMatchObject({
      "error.type": "api_error",
      "oc_exec.error.name": "APIError",
      "oc_exec.attempts": 2,
      "gen_ai.provider.name": "anthropic",
    });
    expect(root!.events).toEqual([
      {
        name: "oc_exec.retry",
        timeMs: T0 + 2000,
        attributes: {
          "oc_exec.failed_attempt": 1,
          "oc_exec.class": "api_error",
          "error.type": "APIError",
          "oc_exec.wait_ms": 2000,
        },
      },
    ]);
    expect(root!.children[0]!.attributes["error.type"]).toBe("denied");
  });

  it("a tool whose lines came late starts no earlier than the step that called it", () => {
    const plan = new TracePlan({ captureContent: false });
    for (const e of stamped([
      runStarted(),
      { type: "step.started", step: 1 },
      {
        type: "tool",
        call_id: "c",
        tool: "bash",
        status: "completed",
        input: {},
        output: "",
        output_truncated: false,
        error: null,
        title: null,
        duration_ms: 5000,
      },
      result("success", 0),
    ]))
      plan.observe(e);
    expect(shape(plan.roots()[0]!, T0)[4]).toEqual([
      ["chat claude-sonnet-4-5", 1, 3, null, []],
      ["execute_tool bash", 1, 2, null, []],
    ]);
  });

  it("a batch: one span, each task's turn below it; a stream cut short ends its turn as an error", () => {
    const plan = new TracePlan({ captureContent: false });
    for (const e of stamped([
      runStarted({ task_id: "a" }),
      runStarted({ task_id: "b" }),
      { ...result("success", 0), task_id: "a" },
      { type: "step.started", step: 1, task_id: "b" },
    ]))
      plan.observe(e);
    const [batch, ...rest] = plan.roots();
    expect(rest).toEqual([]);
    expect(shape(batch!, T0)).toEqual([
      "oc_exec.batch",
      0,
      3,
      null,
      [
        ["invoke_agent build", 0, 2, null, []],
        [
          "invoke_agent build",
          1,
          3,
          "the turn's stream ended without a result",
          [["chat claude-sonnet-4-5", 3, 3, null, []]],
        ],
      ],
    ]);
    expect(batch!.children.map((c) => c.attributes["oc_exec.task_id"])).toEqual(["a", "b"]);
  });
});
