// OpenTelemetry traces with the real opencode, exported to a real OTLP receiver on loopback
// (test/support/otlp-receiver.ts decodes them with the protocol's own definitions): the spans,
// their parents and their attributes for a tool turn, a failed turn, a conversation and a two-task
// batch; the pipeline's TRACEPARENT; a collector that fails or never answers; the opt-outs.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";
import { parseLines } from "../support/run-cli.js";
import { closedPort } from "../support/scenarios.js";

const e2e = useE2E();
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver?.close();
});
beforeEach(() => {
  receiver.spans.length = 0;
  receiver.headers.length = 0;
  receiver.answer = "ok";
});

const PIPELINE_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PIPELINE_SPAN = "00f067aa0ba902b7";
const otel = (extra: Record<string, string> = {}) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  ...extra,
});

/** name -> its parent's name ("" for a root), in the order the spans started (a parent before its children). */
function tree(spans: ReceivedSpan[]): [string, string][] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const depth = (s: ReceivedSpan): number => {
    const parent = byId.get(s.parentSpanId);
    return parent ? 1 + depth(parent) : 0;
  };
  return [...spans]
    .sort((a, b) => a.startMs - b.startMs || depth(a) - depth(b) || a.name.localeCompare(b.name))
    .map((s) => [s.name, byId.get(s.parentSpanId)?.name ?? (s.parentSpanId ? `(${s.parentSpanId})` : "")]);
}
const one = (name: string) => {
  const found = receiver.spans.filter((s) => s.name === name);
  expect(found).toHaveLength(1);
  return found[0]!;
};

describe("OpenTelemetry traces", () => {
  it("a tool turn: invoke_agent with a chat span per step and an execute_tool span, a child of the pipeline's trace", async () => {
    const run = await e2e.run(["-q", "--allow", "bash", "scenario:tool traces-tool"], {
      extraEnv: otel({
        TRACEPARENT: `00-${PIPELINE_TRACE}-${PIPELINE_SPAN}-01`,
        OTEL_SERVICE_NAME: "ci-agents",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=ci",
        OTEL_EXPORTER_OTLP_HEADERS: "x-honeycomb-team=hc-secret-key-0123456789",
      }),
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    // stdout is untouched: the result is still the last line.
    expect(run.types).toEqual([
      "run.started",
      "session.started",
      "step.started",
      "tool",
      "step.finished",
      "step.started",
      "message",
      "step.finished",
      "result",
    ]);
    // Only oc-exec's spans: opencode was given none of the OTEL_* variables, so it exported nothing.
    expect(new Set(receiver.spans.map((s) => s.scope))).toEqual(new Set(["oc-exec"]));
    // Which parent each span has (the order of spans that start in the same millisecond is not the point).
    expect(tree(receiver.spans).sort()).toEqual([
      ["chat", "invoke_agent"],
      ["chat", "invoke_agent"],
      ["execute_tool bash", "invoke_agent"],
      ["invoke_agent", `(${PIPELINE_SPAN})`],
    ]);
    // The tool runs within its step: between the first chat span's start and the second's.
    const [first, second] = receiver.spans.filter((s) => s.name === "chat").sort((a, b) => a.startMs - b.startMs);
    const call = one("execute_tool bash");
    expect(call.startMs).toBeGreaterThanOrEqual(first!.startMs);
    expect(call.endMs).toBeLessThanOrEqual(second!.startMs);
    expect(new Set(receiver.spans.map((s) => s.traceId))).toEqual(new Set([PIPELINE_TRACE]));
    const agent = one("invoke_agent");
    expect(agent.resource).toMatchObject({ "service.name": "ci-agents", "deployment.environment": "ci" });
    expect(agent.attributes).toEqual({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.conversation.id": run.result.session_id,
      // The test home's provider and model (test/support/hermetic-home.ts).
      "gen_ai.response.model": "fake-model",
      "gen_ai.provider.name": "fake",
      "gen_ai.usage.input_tokens": run.result.usage.input,
      "gen_ai.usage.output_tokens": run.result.usage.output,
      "oc_exec.class": "success",
      "oc_exec.exit_code": 0,
      "oc_exec.cost_usd": run.result.cost_usd,
      "oc_exec.steps": 2,
      "oc_exec.opencode.version": "1.18.33",
    });
    expect(agent.status.code).toBe(0);
    const tool = one("execute_tool bash");
    const toolEvent = run.events.find((e) => e.type === "tool") as { call_id: string };
    expect(tool.attributes).toEqual({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "bash",
      "gen_ai.tool.type": "function",
      "gen_ai.tool.call.id": toolEvent.call_id,
      "oc_exec.tool.status": "completed",
    });
    const chats = receiver.spans.filter((s) => s.name === "chat").sort((a, b) => a.startMs - b.startMs);
    expect(chats.map((c) => c.kind)).toEqual([3, 3]); // SPAN_KIND_CLIENT
    expect(chats.map((c) => c.attributes["gen_ai.response.finish_reasons"])).toEqual([["tool-calls"], ["stop"]]);
    expect(chats[0]!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "fake",
      "gen_ai.response.model": "fake-model",
    });
    // No content without the opt-in.
    expect(JSON.stringify(receiver.spans)).not.toContain("Hello");
    // The tracing backend's key went to the collector, and nowhere else.
    expect(receiver.headers[0]!["x-honeycomb-team"]).toBe("hc-secret-key-0123456789");
    expect(run.stdout + run.stderr).not.toContain("hc-secret-key");
  }, 60_000);

  it("a 401: the turn's span is an error with the class, the exit code and the cause", async () => {
    const run = await e2e.run(["-q", "scenario:http-401 traces-401"], { extraEnv: otel() });
    expect(run.code).toBe(4);
    const agent = one("invoke_agent");
    expect(agent.status).toEqual({ code: 2, message: run.result.error!.message }); // STATUS_CODE_ERROR
    expect(agent.attributes).toMatchObject({
      "oc_exec.class": "api_error",
      "oc_exec.exit_code": 4,
      "error.type": "api_error",
      "oc_exec.error.name": run.result.error!.name,
    });
  }, 60_000);

  it("a two-task batch: a batch span with each task's turn below it, in one trace", async () => {
    const tasks = join(e2e.home.root, "traces-tasks.jsonl");
    writeFileSync(
      tasks,
      [
        { id: "first", prompt: "scenario:plain traces-b1" },
        { id: "second", prompt: "scenario:http-401 traces-b2" },
      ]
        .map((t) => JSON.stringify(t))
        .join("\n"),
    );
    const run = await e2e.runRaw(["batch", tasks, "-q", "--concurrency", "1"], { extraEnv: otel() });
    expect(run.code).toBe(1);
    expect(parseLines(run.stdout).at(-1)).toMatchObject({ type: "batch.result", exit_code: 1 });
    // The 401 ends the second turn before any step: no chat span.
    expect(tree(receiver.spans)).toEqual([
      ["oc_exec.batch", ""],
      ["invoke_agent", "oc_exec.batch"],
      ["chat", "invoke_agent"],
      ["invoke_agent", "oc_exec.batch"],
    ]);
    expect(new Set(receiver.spans.map((s) => s.traceId)).size).toBe(1);
    const turns = receiver.spans.filter((s) => s.name === "invoke_agent").sort((a, b) => a.startMs - b.startMs);
    expect(turns.map((t) => [t.attributes["oc_exec.task_id"], t.attributes["oc_exec.class"], t.status.code])).toEqual([
      ["first", "success", 0],
      ["second", "api_error", 2],
    ]);
    expect(one("oc_exec.batch")).toMatchObject({
      attributes: { "oc_exec.exit_code": 1 },
      status: { code: 2, message: "exit 1" },
    });
  }, 90_000);

  it("a conversation: a conversation span with a turn below it per line; with the opt-in, the final messages", async () => {
    const run = await e2e.run(["-q", "--input-format", "jsonl"], {
      stdin: `${JSON.stringify({ prompt: "scenario:plain traces-c1" })}\n${JSON.stringify({ prompt: "and then?" })}\n`,
      extraEnv: otel({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" }),
    });
    expect(run.code).toBe(0);
    expect(tree(receiver.spans)).toEqual([
      ["oc_exec.conversation", ""],
      ["invoke_agent", "oc_exec.conversation"],
      ["chat", "invoke_agent"],
      ["invoke_agent", "oc_exec.conversation"],
      ["chat", "invoke_agent"],
    ]);
    const turns = receiver.spans.filter((s) => s.name === "invoke_agent").sort((a, b) => a.startMs - b.startMs);
    expect(turns.map((t) => t.attributes["oc_exec.turn"])).toEqual([1, 2]);
    expect(JSON.parse(String(turns[0]!.attributes["gen_ai.output.messages"]))).toEqual([
      {
        role: "assistant",
        parts: [{ type: "text", content: "Hello from the scripted model." }],
        finish_reason: "stop",
      },
    ]);
  }, 90_000);

  it("http/json: the same spans over OTLP/JSON", async () => {
    const run = await e2e.run(["-q", "scenario:plain traces-json"], {
      extraEnv: otel({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }),
    });
    expect(run.code).toBe(0);
    expect(String(receiver.headers[0]!["content-type"])).toContain("application/json");
    expect(tree(receiver.spans)).toEqual([
      ["invoke_agent", ""],
      ["chat", "invoke_agent"],
    ]);
  }, 60_000);

  it("a collector that refuses, one that is not there, one that never answers: the turn's exit and stream unchanged, one line on stderr", async () => {
    receiver.answer = 500;
    const refused = await e2e.run(["-q", "scenario:plain traces-500"], { extraEnv: otel() });
    expect(refused.code).toBe(0);
    expect(refused.types.at(-1)).toBe("result");
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toBe("oc-exec: traces not exported: Internal Server Error\n");

    const port = await closedPort();
    const absent = await e2e.run(["-q", "scenario:plain traces-absent"], {
      extraEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
    });
    expect(absent.code).toBe(0);
    expect(absent.types.at(-1)).toBe("result");
    expect(absent.stderr).toMatch(/^oc-exec: traces not exported: .*ECONNREFUSED/);
    expect(absent.stderr.trim().split("\n")).toHaveLength(1);

    receiver.answer = "never";
    const silent = await e2e.run(["-q", "--timeout", "30s", "scenario:http-401 traces-silent"], { extraEnv: otel() });
    expect(silent.code).toBe(4);
    expect(silent.types.at(-1)).toBe("result");
    expect(silent.stderr.trim().split("\n")).toHaveLength(1);
    expect(silent.stderr).toMatch(/^oc-exec: traces not exported: /);
  }, 90_000);

  it("OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none: nothing exported, nothing said; a console exporter or gRPC: said once, the turn unchanged", async () => {
    const offs: Record<string, string>[] = [{ OTEL_SDK_DISABLED: "true" }, { OTEL_TRACES_EXPORTER: "none" }];
    for (const off of offs) {
      const run = await e2e.run(["-q", "scenario:plain traces-off"], { extraEnv: otel(off) });
      expect(run.code).toBe(0);
      expect(run.stderr).toBe("");
    }
    expect(receiver.headers).toEqual([]);
    const consoled = await e2e.run(["-q", "scenario:plain traces-console"], {
      extraEnv: { OTEL_TRACES_EXPORTER: "console" },
    });
    expect(consoled.code).toBe(0);
    expect(consoled.stderr).toBe(
      "oc-exec: OTEL_TRACES_EXPORTER=console: oc-exec exports traces over OTLP only (stdout carries its events and nothing else); no trace is exported\n",
    );
    expect(consoled.types.at(-1)).toBe("result");
    const grpc = await e2e.run(["-q", "scenario:plain traces-grpc"], {
      extraEnv: otel({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
    });
    expect(grpc.code).toBe(0);
    expect(grpc.stderr).toContain('oc-exec: OTLP protocol "grpc": oc-exec exports over http/protobuf or http/json');
    expect(receiver.headers).toEqual([]);
  }, 90_000);

  it("doctor says whether and where traces go; one it cannot send is not ready (exit 5)", async () => {
    const off = await e2e.runRaw(["doctor"]);
    expect(off.stderr).toContain(
      "✓ traces: off (no OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER=otlp)",
    );
    const on = await e2e.runRaw(["doctor"], {
      extraEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://team:s3cret-pass@collector.example:4318/" },
    });
    expect(on.code).toBe(0);
    expect(on.stderr).toContain(
      "✓ traces: each run exports a trace over http/protobuf to http://collector.example:4318/v1/traces after its result line (the collector is not asked until then)",
    );
    expect(on.stderr).not.toContain("s3cret");
    const grpc = await e2e.runRaw(["doctor"], { extraEnv: otel({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }) });
    expect(grpc.code).toBe(5);
    expect(grpc.stderr).toContain('✗ traces: OTLP protocol "grpc": oc-exec exports over http/protobuf or http/json');
    expect(receiver.headers).toEqual([]);
  }, 60_000);

  it("a turn that asks for no trace loads nothing of the SDK: no static import from the CLI's entry or the turn command reaches it", () => {
    const bin = fileURLToPath(new URL("../../dist/bin/", import.meta.url));
    const reached = new Set<string>();
    const follow = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      const text = readFileSync(file, "utf8");
      // Static imports only: `import … from "./x.js"` and `import "./x.js"`, never `import("./x.js")`.
      for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s*(?:[^"'()]*?\sfrom\s*)?["'](\.[^"']+)["']/g))
        follow(join(dirname(file), m[1]!));
    };
    const turnCommand = readdirSync(join(bin, "chunks")).find((f) => f.startsWith("turn-command-"))!;
    follow(join(bin, "entry.js"));
    follow(join(bin, "chunks", turnCommand));
    expect(reached.size).toBeGreaterThan(5);
    const sdk = [...reached].filter((f) =>
      /OTLPTraceExporter|W3CTraceContextPropagator|TracerProvider/.test(readFileSync(f, "utf8")),
    );
    expect(sdk).toEqual([]);
    // …while the export chunk, loaded on demand, holds it.
    const exportChunk = readdirSync(join(bin, "chunks")).find((f) => f.startsWith("export-trace-"))!;
    expect(readFileSync(join(bin, "chunks", exportChunk), "utf8")).toContain("TracerProvider");
  });
});
