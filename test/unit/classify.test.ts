// The classification table, row by row, through the pure core (no process).
import { describe, expect, it } from "vitest";
import { FLAG_LABELS } from "../../src/cli/flag-table.js";
import { CLASS_PRECEDENCE, EXIT_CODES } from "../../src/contract/exit-codes.js";
import { Normalizer } from "../../src/domain/events/normalize.js";
import { API_RULES, classifyOutcome, type TurnEnd } from "../../src/domain/outcome/classify.js";
import { stopClass } from "../../src/domain/outcome/many-turns-end.js";
import { replayStreams } from "../support/replay.js";

const sid = "ses_x";
const line = (o: object) => JSON.stringify({ timestamp: 1, sessionID: sid, ...o });
const stepStart = line({ type: "step_start", part: { type: "step-start" } });
const text = (t: string) => line({ type: "text", part: { type: "text", text: t, messageID: "m1" } });
const stepFinish = (reason: string) =>
  line({
    type: "step_finish",
    part: { reason, tokens: { input: 3, output: 2, reasoning: 0, total: 5, cache: { read: 1, write: 0 } }, cost: 0.25 },
  });
const err = (name: string, data: object) => line({ type: "error", error: { name, data } });
const ok = `${[stepStart, text("hi"), stepFinish("stop")].join("\n")}\n`;

describe("classifyOutcome", () => {
  it.each([
    ["success", ok, "", 0, "success", null],
    [
      "APIError 401",
      err("APIError", { message: "bad key", statusCode: 401, isRetryable: false }),
      "",
      1,
      "api_error",
      "bad key",
    ],
    [
      "APIError 429",
      err("APIError", { message: "Rate limit reached", statusCode: 429, isRetryable: true }),
      "",
      1,
      "api_error",
      "Rate limit reached",
    ],
    [
      "APIError 503",
      err("APIError", { message: "overloaded", statusCode: 503, isRetryable: true }),
      "",
      1,
      "api_error",
      "overloaded",
    ],
    [
      "APIError with no status (connection refused)",
      err("APIError", { message: "Unable to connect", isRetryable: true }),
      "",
      1,
      "api_error",
      "Unable to connect",
    ],
    [
      "APIError but opencode exits 0 (older releases)",
      err("APIError", { message: "bad key", statusCode: 401 }),
      "",
      0,
      "api_error",
      "bad key",
    ],
    [
      "ContextOverflowError twice",
      [err("ContextOverflowError", { message: "too long" }), err("ContextOverflowError", { message: "too long" })].join(
        "\n",
      ),
      "",
      1,
      "context_overflow",
      "too long",
    ],
    [
      "ProviderAuthError",
      err("ProviderAuthError", { providerID: "anthropic", message: "missing API key" }),
      "",
      1,
      "config_error",
      "missing API key",
    ],
    [
      "MessageOutputLengthError",
      err("MessageOutputLengthError", { message: "output too long" }),
      "",
      1,
      "agent_error",
      "output too long",
    ],
    ["ContentFilterError", err("ContentFilterError", { message: "filtered" }), "", 1, "agent_error", "filtered"],
    ["StructuredOutputError", err("StructuredOutputError", { message: "not json" }), "", 1, "agent_error", "not json"],
    ["MessageAbortedError", err("MessageAbortedError", { message: "aborted" }), "", 1, "agent_error", "aborted"],
    [
      "UnknownError with no cause",
      err("UnknownError", { message: "Unexpected server error. Check server logs for details.", ref: "err_1" }),
      "",
      1,
      "agent_error",
      "Unexpected server error",
    ],
    [
      "UnknownError whose ref is logged on stderr",
      err("UnknownError", { message: "Unexpected server error.", ref: "err_2" }),
      'timestamp=x level=ERROR message=failed ref=err_2 error="ProviderModelNotFoundError: Model not found: fake/nope."',
      1,
      "config_error",
      "Model not found: fake/nope.",
    ],
    [
      "last step cut off (length)",
      [stepStart, text("cut"), stepFinish("length")].join("\n"),
      "",
      0,
      "agent_error",
      'reason "length"',
    ],
    [
      "rejected permission, exit 0",
      [
        stepStart,
        line({
          type: "tool_use",
          part: {
            tool: "bash",
            callID: "c1",
            state: {
              status: "error",
              input: { command: "ls" },
              error: "The user rejected permission to use this specific tool call.",
            },
          },
        }),
        stepFinish("tool-calls"),
      ].join("\n"),
      "! permission requested: bash (ls); auto-rejecting",
      0,
      "approval_denied",
      "bash (ls)",
    ],
    ["exit 1, no JSON, stderr says why", "", "Error: Session not found", 1, "config_error", "Session not found"],
    [
      "exit 1, no JSON, unknown stderr",
      "",
      "fatal: could not open database",
      1,
      "agent_error",
      "could not open database",
    ],
    ["exit 0, no JSON at all", "", "", 0, "agent_error", "printed no JSON event"],
    ["garbage only", "<html>\nnope\n", "", 0, "agent_error", "only 2 non-JSON line(s)"],
    ["exit non-zero after events, no error line", ok, "", 2, "agent_error", "exited with status 2 with no error event"],
    [
      "2.x error shape",
      line({ type: "error", error: { type: "ContextOverflowError", message: "prompt is too long" } }),
      "",
      1,
      "context_overflow",
      "prompt is too long",
    ],
    [
      "2.x bare message",
      line({ type: "error", message: "provider auth failed", name: "ProviderAuthError" }),
      "",
      1,
      "config_error",
      "provider auth failed",
    ],
  ])("%s", (_name, stdout, stderr, exitCode, cls, message) => {
    const { result } = replayStreams(stdout, stderr, { exitCode });
    expect(result.class).toBe(cls);
    expect(result.exit_code).toBe(EXIT_CODES[cls as keyof typeof EXIT_CODES]);
    if (message === null) expect(result.error).toBeNull();
    else expect(result.error!.message).toContain(message);
  });

  it("killed by a signal with no error line: agent_error with the stderr tail", () => {
    const { result } = replayStreams(`${stepStart}\n`, "panic: boom\n", { exitCode: null, signal: "SIGSEGV" });
    expect(result.class).toBe("agent_error");
    expect(result.error!.message).toBe(
      "opencode was killed by SIGSEGV with no error event; its stderr ended with:\npanic: boom",
    );
  });

  it("our own stops and launch problems come first, in the documented order", () => {
    const facts = new Normalizer({ workspace: "/w", session: null, maxOutputBytes: 10 }, () => {}).facts;
    facts.errors.push({
      class: "api_error",
      name: "APIError",
      message: "x",
      statusCode: 500,
      retryable: true,
      ref: null,
    });
    facts.permissionDenials.push({ permission: "bash", pattern: null, tool: "bash", call_id: null });
    const end = (e: Partial<TurnEnd>): TurnEnd => ({
      stop: null,
      launchError: null,
      internalError: null,
      process: { exitCode: 1, signal: null },
      outputError: null,
      ...e,
    });
    const classify = (e: Partial<TurnEnd>) =>
      classifyOutcome(facts, end(e), { ...API_RULES, advice: { allow: FLAG_LABELS.allow, auto: FLAG_LABELS.auto } });
    // Through an ACP agent, the messages name that agent.
    const byAgent = (e: Partial<TurnEnd>) =>
      classifyOutcome(facts, end(e), { ...API_RULES, agent: "qwen" }).error?.message;
    expect(byAgent({ stop: { kind: "timeout", timeout: "idle", ms: 5000, option: "--idle-timeout" } })).toBe(
      "the idle timeout (--idle-timeout 5s) fired: no output from qwen for 5s; oc-exec stopped the turn",
    );
    expect(classify({ stop: { kind: "interrupted", signal: "SIGINT" } }).class).toBe("interrupted");
    expect(classify({ stop: { kind: "terminated", signal: "SIGTERM" } }).class).toBe("terminated");
    expect(classify({ stop: { kind: "timeout", timeout: "turn", ms: 90_000, option: "--timeout" } })).toEqual({
      class: "timeout",
      error: {
        name: "TimeoutError",
        message: "the turn timeout (--timeout 90s) fired; oc-exec stopped the turn",
        status_code: null,
        retryable: null,
        timeout: { kind: "turn", ms: 90_000 },
      },
    });
    expect(
      classify({ stop: { kind: "budget", limit: "steps", max: 3, used: 4, option: "--max-steps" } }).error,
    ).toMatchObject({
      name: "BudgetExceeded",
      message: "--max-steps 3 was crossed: opencode started step 4; oc-exec stopped it",
      budget: { limit: "steps", max: 3, used: 4 },
    });
    expect(classify({ launchError: { name: "UsageError", message: "bad flag" } }).class).toBe("config_error");
    expect(classify({}).class).toBe("api_error");
    facts.errors.length = 0;
    expect(classify({}).class).toBe("approval_denied");
    expect(classify({ internalError: { message: "bug" } }).class).toBe("internal_error");
  });

  it("the precedence list names every class once, success last", () => {
    expect([...CLASS_PRECEDENCE].sort()).toEqual(Object.keys(EXIT_CODES).sort());
    expect(CLASS_PRECEDENCE.at(-1)).toBe("success");
    expect(CLASS_PRECEDENCE.indexOf("timeout")).toBeLessThan(CLASS_PRECEDENCE.indexOf("budget_exceeded"));
    expect(CLASS_PRECEDENCE.indexOf("budget_exceeded")).toBeLessThan(CLASS_PRECEDENCE.indexOf("config_error"));
  });
});

describe("the same answer from every release", () => {
  const withCost = (reason: string, cost: number, messageID: string) =>
    line({
      type: "step_finish",
      part: {
        reason,
        messageID,
        tokens: { input: 3, output: 2, reasoning: 0, total: 5, cache: { read: 0, write: 0 } },
        cost,
      },
    });
  const textIn = (t: string, messageID: string) => line({ type: "text", part: { type: "text", text: t, messageID } });

  it("1.x: an APIError opencode retried past, then an answer: success with a recovered_error warning", () => {
    const stream = [
      stepStart,
      err("APIError", { message: "Overloaded", statusCode: 529, isRetryable: true }),
      stepStart,
      textIn("Answered anyway.", "m2"),
      withCost("stop", 0.001, "m2"),
    ].join("\n");
    for (const exitCode of [0, 1]) {
      const { result, events } = replayStreams(`${stream}\n`, "", { exitCode });
      expect(result).toMatchObject({ class: "success", exit_code: 0, text: "Answered anyway." });
      expect(events.filter((e) => e.type === "warning").map((e) => e.code)).toEqual(["recovered_error"]);
    }
  });

  it("an error with nothing after it, or an answer before it, is still the turn's failure", () => {
    const after = [stepStart, textIn("partial", "m1"), err("APIError", { message: "down", statusCode: 503 })].join(
      "\n",
    );
    expect(replayStreams(`${after}\n`, "", { exitCode: 1 }).result.class).toBe("api_error");
    const alone = err("APIError", { message: "down", statusCode: 503 });
    expect(replayStreams(`${alone}\n`, "", { exitCode: 0 }).result.class).toBe("api_error");
  });

  it("a stream that ends after the model asked for tools, with no answer and status 0, is a cut-off turn", () => {
    const stream = [stepStart, withCost("tool-calls", 0, "m1")].join("\n");
    const { result } = replayStreams(`${stream}\n`, "", { exitCode: 0 });
    expect(result.class).toBe("agent_error");
    expect(result.error).toMatchObject({
      name: "StreamEnded",
      message:
        "opencode's stream ended after step 1 asked for tools, and no step followed to answer (opencode exited with status 0, with no answer)",
    });
  });

  it("result.cost_usd is the sum of the steps' cost_usd as a consumer adds them", () => {
    const costs = [0.0001, 0.0002632, 0.000000004, 0.1, 0.2];
    const stream = costs.flatMap((c, i) => [stepStart, textIn(`step ${i}`, `m${i}`), withCost("stop", c, `m${i}`)]);
    const { result, events } = replayStreams(`${stream.join("\n")}\n`, "");
    const steps = events.filter((e) => e.type === "step.finished").map((e) => e.cost_usd);
    expect(steps).toEqual(costs);
    expect(result.cost_usd).toBe(steps.reduce((sum, c) => sum + c, 0));
  });

  it("messages agree with the counts: JSON lines oc-exec does not know are not 'no JSON event'", () => {
    const stream = [
      line({ type: "session.updated", info: {} }),
      JSON.stringify({ weird: true, apiKey: "sk-abcdefghijklmnop" }),
    ];
    const { result, events } = replayStreams(`${stream.join("\n")}\n`, "fatal\n", { exitCode: 1 });
    expect(result.stream).toMatchObject({ json_lines: 2 });
    expect(result.error!.message).toBe(
      "opencode exited with status 1 after 2 JSON lines but no event oc-exec knows (see the warnings); its stderr ended with:\nfatal",
    );
    const warnings = events.filter((e) => e.type === "warning").map((e) => e.message);
    expect(warnings[0]).toMatch(
      /^opencode printed event type "session\.updated", which oc-exec does not know; ignored: \{"timestamp":1,"sessionID":"ses_x","type":"session\.updated","info":\{\}\}$/,
    );
    expect(warnings[1]).toMatch(
      /^opencode printed an object without a type, which oc-exec does not know; ignored: \{"weird":true,"apiKey":"\[REDACTED\]"\}$/,
    );
  });
});

describe("a 2.x declined permission without its stderr notice", () => {
  it("is still a denied tool and a permission.denied event: approval_denied, not agent_error", async () => {
    const { loadFixture } = await import("../support/fixtures.js");
    const fixture = loadFixture("2.0.14", "permission-ask")!;
    const { result, events } = replayStreams(fixture.stdout, "", { exitCode: 0 });
    expect(result.class).toBe("approval_denied");
    expect(result.tools).toEqual({ total: 1, failed: 0, denied: 1 });
    expect(events.filter((e) => e.type === "permission.denied")).toMatchObject([
      { permission: null, pattern: null, tool: "bash", call_id: "call_function_1" },
    ]);
  });
});

describe("stopClass: what a stop makes of a conversation or a batch it cut short", () => {
  it.each([
    [{ kind: "interrupted", signal: "SIGINT" }, "interrupted", 130],
    [{ kind: "terminated", signal: "SIGTERM" }, "terminated", 143],
    [{ kind: "timeout", timeout: "turn", ms: 1000 }, "timeout", 124],
    [{ kind: "budget", limit: "tokens", max: 300, used: 384 }, "budget_exceeded", 6],
    [{ kind: "broken_pipe" }, "agent_error", 1],
  ] as const)("%o -> %s (exit %i)", (reason, cls, code) => {
    expect(stopClass(reason)).toBe(cls);
    expect(EXIT_CODES[stopClass(reason)]).toBe(code);
  });
});
