// How many turns together end (a batch, a conversation, a merged batch): the class a stop gives
// them, and the one exit ladder. A turn's own class comes from classifyOutcome; these decide only
// what lies beyond one turn.
import { EXIT_CODES, type OutcomeClass } from "../../contract/exit-codes.js";
import type { StopReason } from "./classify.js";

/** The class a stop gives what it cut short beyond one turn: the summary, a turn never started. */
export function stopClass(reason: StopReason): OutcomeClass {
  switch (reason.kind) {
    case "interrupted":
    case "terminated":
    case "timeout":
      return reason.kind;
    case "budget":
      return "budget_exceeded";
    default:
      return "agent_error";
  }
}

export type ManyTurnsEnd = {
  /** The class of what stopped them early (stopClass), if anything did. */
  stop: OutcomeClass | null;
  /** What was to run is not all there (a bad input line, a missing shard, a batch that could not run). */
  incomplete: boolean;
  /** Every turn that ran succeeded. */
  allSucceeded: boolean;
};

/**
 * The one exit ladder: a signal outranks everything; then a bug in oc-exec (70); then an incomplete
 * whole (exit 5: fix the input); then whatever else stopped it (a budget: 6, a timeout: 124); then 1
 * if any turn failed.
 */
export function manyTurnsExit(end: ManyTurnsEnd): { ok: boolean; exitCode: number } {
  const ok = !end.incomplete && end.stop === null && end.allSucceeded;
  const exitCode =
    end.stop === "interrupted" || end.stop === "terminated" || end.stop === "internal_error"
      ? EXIT_CODES[end.stop]
      : end.incomplete
        ? EXIT_CODES.config_error
        : end.stop !== null
          ? EXIT_CODES[end.stop]
          : ok
            ? EXIT_CODES.success
            : EXIT_CODES.agent_error;
  return { ok, exitCode };
}
