// Which failures --retry tries again: the one table. Pure: the classified outcome of an attempt
// and how it ended in, whether another attempt may help out.
//
// Transient: the provider said so (429, 408, 425, 5xx, 529 overloaded, or opencode's own "retryable"),
// the connection went (refused or reset mid-stream: no status at all), the stream stalled
// (--idle-timeout, --startup-timeout), the server or its event stream was lost, or opencode was
// killed by a signal oc-exec did not send. Never: authentication and payment (401, 402, 403) and
// every other 4xx, configuration errors, budgets, denied approvals, context overflow, --timeout, a
// signal oc-exec received, output that failed the schema, a model that answered and stopped.
import type { ErrorDetail } from "../../contract/schema.js";
import type { Outcome, TurnEnd } from "./classify.js";

/** HTTP statuses a provider uses for "try again later". */
const RETRY_STATUSES = new Set([408, 425, 429, 500, 502, 503, 504, 529]);
/** Losses mid-turn: the server went away, its event stream broke, or the ssh connection dropped. */
const LOST = new Set(["ServerLost", "EventStreamLost", "SshConnectionLost"]);

export type Transient = { name: string; message: string };

export function transientFailure(outcome: Outcome, end: TurnEnd): Transient | null {
  const error: ErrorDetail | null = outcome.error;
  if (!error) return null;
  switch (outcome.class) {
    case "api_error": {
      // The provider asked for a wait longer than the turn allows: trying again now would not help.
      if (end.stop?.kind === "retry_wait") return null;
      const status = error.status_code;
      if (status === null) return error.retryable === false ? null : error;
      if (status === 401 || status === 402 || status === 403) return null;
      return RETRY_STATUSES.has(status) || status >= 500 || error.retryable === true ? error : null;
    }
    case "timeout":
      // A stall, not the user's budget of time: --idle-timeout and --startup-timeout only.
      return end.stop?.kind === "timeout" && !end.stop.whole && end.stop.timeout !== "turn" ? error : null;
    case "agent_error": {
      if (end.lost && LOST.has(end.lost.name)) return error;
      // Killed by a signal nobody here sent (the OOM killer, a runner reaping processes).
      if (end.stop === null && end.process?.signal) return error;
      return null;
    }
    default:
      return null;
  }
}

/** The wait before attempt `next` (2, 3, …): exponential from the first delay, capped, with jitter. */
export function retryWait(next: number, firstMs: number, maxMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(maxMs, firstMs * 2 ** Math.max(0, next - 2));
  // Between half and all of it, so many clients failing together do not come back together.
  return Math.round(exponential * (0.5 + random() / 2));
}
