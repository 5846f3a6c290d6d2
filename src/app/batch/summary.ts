// The batch summary line, built the same way by `oc-exec batch` and `oc-exec merge`, through the
// one exit ladder (domain/outcome/many-turns-end.ts): 0 every task succeeded; 1 some task did not; 6 a
// batch budget stopped it; 130/143 a signal; 5 the batch is not complete (it could not run; merge:
// a task or shard missing or duplicated). It is stamped by an emitter of its own: batch.result
// counts seq in its own scope (0), apart from every task's events.
import type { OutcomeClass } from "../../contract/exit-codes.js";
import type { BatchResult, EventOf, TaskOutcome, Usage } from "../../contract/schema.js";
import { SCHEMA_VERSION } from "../../contract/schema-version.js";
import { emptyUsage } from "../../contract/usage.js";
import { Emitter } from "../../domain/events/emitter.js";
import { manyTurnsExit } from "../../domain/outcome/many-turns-end.js";

export type BatchEnd = {
  tasks: TaskOutcome[];
  usage: Usage;
  costUsd: number;
  durationMs: number;
  shard: BatchResult["shard"];
  problems: string[];
  /** The class of what stopped the batch early (stopClass), if anything did. */
  stop: OutcomeClass | null;
};

/** Writes the batch's summary line through an emitter of its own scope; returns it as written. */
export function writeBatchResult(end: BatchEnd, write: (event: BatchResult) => void): BatchResult {
  const counts: Record<string, number> = {};
  for (const t of end.tasks) if (t.run !== "skipped") counts[t.class] = (counts[t.class] ?? 0) + 1;
  const { ok, exitCode } = manyTurnsExit({
    stop: end.stop,
    incomplete: end.problems.length > 0,
    allSucceeded: end.tasks.every((t) => t.class === "success"),
  });
  const draft: Omit<EventOf<"batch.result">, "seq" | "time" | "session_id"> = {
    type: "batch.result",
    schema_version: SCHEMA_VERSION,
    ok,
    exit_code: exitCode,
    counts,
    ...(end.tasks.some((t) => t.attempts !== undefined)
      ? { retries: end.tasks.reduce((n, t) => n + (t.attempts ?? 1) - 1, 0) }
      : {}),
    tasks: end.tasks,
    usage: end.usage,
    cost_usd: end.costUsd,
    duration_ms: end.durationMs,
    shard: end.shard,
    problems: end.problems,
  };
  let written: BatchResult | null = null;
  new Emitter(
    (event) => {
      written = event as BatchResult;
      write(written);
    },
    () => null,
  ).emit(draft);
  return written!;
}

/**
 * The summary of a batch that could not run (a malformed tasks file, a bad flag, no server): no
 * task, the problems, exit 5. A batch stream ends with a batch.result even then, so a script that
 * reads the summary, and `merge`, learn why instead of finding nothing.
 */
export function writeBatchNotRun(
  problems: string[],
  shard: BatchResult["shard"],
  write: (event: BatchResult) => void,
  /** internal_error: a bug in oc-exec stopped the batch (exit 70), not its input. */
  stop: "internal_error" | null = null,
): BatchResult {
  return writeBatchResult({ tasks: [], usage: emptyUsage(), costUsd: 0, durationMs: 0, shard, problems, stop }, write);
}
