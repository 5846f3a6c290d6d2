// --retry's pure parts: which failures are transient (the one table), the waits between attempts,
// the model of each attempt, and what a resumed attempt is told.
import { describe, expect, it } from "vitest";
import type { ErrorDetail } from "../../src/contract/schema.js";
import type { Outcome, TurnEnd } from "../../src/domain/outcome/classify.js";
import { retryWait, transientFailure } from "../../src/domain/outcome/transient.js";
import { attemptModels, resumePrompt } from "../../src/engine/attempts.js";

const error = (name: string, status: number | null, retryable: boolean | null = null): ErrorDetail => ({
  name,
  message: `${name} happened`,
  status_code: status,
  retryable,
});
const end = (more: Partial<TurnEnd> = {}): TurnEnd => ({
  stop: null,
  launchError: null,
  internalError: null,
  process: { exitCode: 1, signal: null },
  outputError: null,
  ...more,
});
const api = (status: number | null, retryable: boolean | null = null): Outcome => ({
  class: "api_error",
  error: error("APIError", status, retryable),
});

describe("transient failures: the one table", () => {
  it("retryable API errors: 429, 408, 425, 5xx, 529, a lost connection (no status)", () => {
    for (const status of [408, 425, 429, 500, 502, 503, 504, 529, 599])
      expect(transientFailure(api(status), end()), String(status)).not.toBeNull();
    expect(transientFailure(api(null), end())).toMatchObject({ name: "APIError" });
    expect(transientFailure(api(418, true), end())).not.toBeNull();
  });

  it("never: 401, 402, 403 (even marked retryable), other 4xx, a connection error opencode calls final", () => {
    for (const status of [400, 401, 402, 403, 404, 422])
      expect(transientFailure(api(status, status === 401 ? true : null), end()), String(status)).toBeNull();
    expect(transientFailure(api(null, false), end())).toBeNull();
  });

  it("a stall (--idle-timeout, --startup-timeout), never --timeout nor a batch's timeout", () => {
    const timeout: Outcome = { class: "timeout", error: error("TimeoutError", null) };
    expect(transientFailure(timeout, end({ stop: { kind: "timeout", timeout: "idle", ms: 1000 } }))).not.toBeNull();
    expect(transientFailure(timeout, end({ stop: { kind: "timeout", timeout: "startup", ms: 1000 } }))).not.toBeNull();
    expect(transientFailure(timeout, end({ stop: { kind: "timeout", timeout: "turn", ms: 1000 } }))).toBeNull();
    expect(
      transientFailure(
        timeout,
        end({ stop: { kind: "timeout", timeout: "idle", ms: 1, whole: { option: "--timeout", scope: "batch" } } }),
      ),
    ).toBeNull();
  });

  it("a lost server or event stream, and opencode killed by a signal nobody here sent", () => {
    const agent = (name: string): Outcome => ({ class: "agent_error", error: error(name, null) });
    expect(transientFailure(agent("ServerLost"), end({ lost: { name: "ServerLost", message: "x" } }))).not.toBeNull();
    expect(
      transientFailure(agent("EventStreamLost"), end({ lost: { name: "EventStreamLost", message: "x" } })),
    ).not.toBeNull();
    expect(
      transientFailure(agent("OpencodeFailed"), end({ process: { exitCode: null, signal: "SIGKILL" } })),
    ).not.toBeNull();
    // oc-exec stopped it (a budget here): not transient, and not this class anyway.
    expect(
      transientFailure(
        agent("OpencodeFailed"),
        end({
          stop: { kind: "budget", limit: "steps", max: 1, used: 2 },
          process: { exitCode: null, signal: "SIGTERM" },
        }),
      ),
    ).toBeNull();
    expect(transientFailure(agent("StreamEnded"), end())).toBeNull();
  });

  it("never: a provider's wait longer than the turn allows (retry_wait), though the class is api_error", () => {
    const stop = { kind: "retry_wait" as const, cause: "Overloaded", waitMs: 3_600_000, limit: "--timeout 60s" };
    expect(transientFailure(api(529), end({ stop }))).toBeNull();
  });

  it("never: configuration, budgets, approvals, context overflow, signals to oc-exec, success", () => {
    for (const cls of [
      "config_error",
      "budget_exceeded",
      "approval_denied",
      "context_overflow",
      "interrupted",
      "terminated",
    ] as const)
      expect(transientFailure({ class: cls, error: error("X", null) }, end()), cls).toBeNull();
    expect(transientFailure({ class: "success", error: null }, end())).toBeNull();
  });
});

describe("the waits between attempts", () => {
  it("double from --retry-delay up to --retry-max-delay, between half and all of it", () => {
    expect([2, 3, 4, 5, 6].map((n) => retryWait(n, 1000, 5000, () => 1))).toEqual([1000, 2000, 4000, 5000, 5000]);
    expect(retryWait(2, 1000, 5000, () => 0)).toBe(500);
    expect(retryWait(3, 0, 0, () => 1)).toBe(0);
  });
});

describe("the attempts of a turn", () => {
  it("1 + retry on the model, then as many (at least one) on the fallback", () => {
    expect(attemptModels({ model: "a/m", retry: 2, fallbackModel: null })).toEqual(["a/m", "a/m", "a/m"]);
    expect(attemptModels({ model: null, retry: 2, fallbackModel: "b/f" })).toEqual([null, null, null, "b/f", "b/f"]);
    expect(attemptModels({ model: "a/m", retry: 0, fallbackModel: "b/f" })).toEqual(["a/m", "b/f"]);
  });

  it("a resumed attempt is told why the last one stopped, and gets the schema instruction again", () => {
    expect(resumePrompt({ name: "APIError", message: "Overloaded" }, "\n\nSCHEMA")).toBe(
      "Your previous attempt at this task was interrupted (APIError: Overloaded). Continue from where it stopped and finish the task.\n\nSCHEMA",
    );
  });
});
