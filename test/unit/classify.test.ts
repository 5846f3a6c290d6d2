// The classification table, row by row, through the pure core (no process).
import { describe, expect, it } from "vitest";
import { classifyOutcome, type TurnEnd } from "../../src/outcome/classify.js";
import { CLASS_PRECEDENCE, EXIT_CODES } from "../../src/contract/exit-codes.js";
import { FLAG_LABELS } from "../../src/cli/flags.js";
import { Normalizer } from "../../src/events/normalize.js";
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
    const classify = (e: Partial<TurnEnd>) => classifyOutcome(facts, end(e), FLAG_LABELS);
    expect(classify({ stop: { kind: "interrupted", signal: "SIGINT" } }).class).toBe("interrupted");
    expect(classify({ stop: { kind: "terminated", signal: "SIGTERM" } }).class).toBe("terminated");
    expect(classify({ stop: { kind: "timeout", timeout: "turn", ms: 90_000 } })).toEqual({
      class: "timeout",
      error: {
        name: "TimeoutError",
        message: "the turn timeout (--timeout) of 90s fired; oc-exec stopped the turn",
        status_code: null,
        retryable: null,
        timeout: { kind: "turn", ms: 90_000 },
      },
    });
    expect(classify({ stop: { kind: "budget", limit: "steps", max: 3, used: 4 } }).error).toMatchObject({
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
