// The batch summary line, built the same way by `oc-exec batch` and `oc-exec merge`, with the one
// exit rule: 0 every task succeeded; 1 some task did not; 6 a batch budget stopped it; 130/143 a
// signal; 5 the batch is not complete (merge: a task or shard missing or duplicated).
import { EXIT_CODES, type OutcomeClass } from "../contract/exit-codes.js";
import type { BatchResult, TaskOutcome, Usage } from "../contract/schema.js";
import { SCHEMA_VERSION } from "../contract/schema-version.js";
import { emptyUsage } from "../contract/usage.js";

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

/**
 * The summary of a batch that could not run (a malformed tasks file, a bad flag, no server): no
 * task, the problems, exit 5. A batch stream ends with a batch.result even then, so a script that
 * reads the summary, and `merge`, learn why instead of finding nothing.
 */
export function batchNotRun(problems: string[], shard: BatchResult["shard"]): BatchResult {
  return batchResult({ tasks: [], usage: emptyUsage(), costUsd: 0, durationMs: 0, shard, problems, stop: null });
}

export function batchResult(end: BatchEnd): BatchResult {
  const counts: Record<string, number> = {};
  for (const t of end.tasks) if (t.run !== "skipped") counts[t.class] = (counts[t.class] ?? 0) + 1;
  const ok = end.problems.length === 0 && end.stop === null && end.tasks.every((t) => t.class === "success");
  // A signal outranks everything; an incomplete batch (problems) outranks the budget that stopped it.
  const exitCode =
    end.stop === "interrupted" || end.stop === "terminated"
      ? EXIT_CODES[end.stop]
      : end.problems.length > 0
        ? EXIT_CODES.config_error
        : end.stop !== null
          ? EXIT_CODES[end.stop]
          : ok
            ? EXIT_CODES.success
            : EXIT_CODES.agent_error;
  return {
    type: "batch.result",
    seq: 0,
    time: new Date().toISOString(),
    session_id: null,
    schema_version: SCHEMA_VERSION,
    ok,
    exit_code: exitCode,
    counts,
    tasks: end.tasks,
    usage: end.usage,
    cost_usd: end.costUsd,
    duration_ms: end.durationMs,
    shard: end.shard,
    problems: end.problems,
  };
}
