// `oc-exec merge`: the streams of a sharded batch as one, with one summary. Every task must appear
// exactly once and every shard of the set must be there; otherwise the summary's problems name what
// is missing or duplicated (exit 5: the batch is not complete). Pure: the files' texts in, the
// events to write and the summary's contents out; what is wrong with one file does not stop the rest.
import type { BatchResult, OcEvent, TaskOutcome } from "../../contract/schema.js";
import { addUsage, emptyUsage } from "../../contract/usage.js";
import type { BatchEnd } from "./summary.js";
import { parseTasks } from "./tasks.js";

/** A file's text, or why it could not be read (an errno code). */
export type MergeInput = { file: string; text: string } | { file: string; error: string };

/**
 * A shard written before batch.result's tasks carried `error` still has each task's own result
 * event: the merged summary's "why" comes from there.
 */
function errorFromResult(events: OcEvent[], taskId: string): TaskOutcome["error"] {
  const result = events.filter((e) => e.type === "result" && e.task_id === taskId).at(-1);
  if (result?.type !== "result" || !result.error) return undefined;
  return { name: result.error.name, message: result.error.message };
}

export function mergeStreams(shards: MergeInput[], tasksFile: MergeInput | null): { events: OcEvent[]; end: BatchEnd } {
  const seen = new Map<string, string>();
  const problems: string[] = [];
  const outcomes: TaskOutcome[] = [];
  const events: OcEvent[] = [];
  const shardFiles = new Map<number, string>();
  let shardCount: number | null = null;
  let cost = 0;
  let duration = 0;
  const usage = emptyUsage();
  for (const input of shards) {
    const { file } = input;
    if ("error" in input) {
      problems.push(`cannot read ${file}: ${input.error}`);
      continue;
    }
    let summary: BatchResult | null = null;
    const taskEvents: OcEvent[] = [];
    for (const [index, line] of input.text.split("\n").entries()) {
      if (line.trim() === "") continue;
      let event: OcEvent;
      try {
        event = JSON.parse(line) as OcEvent;
      } catch {
        problems.push(`${file}:${index + 1}: not JSON: ${line.slice(0, 100)}`);
        continue;
      }
      if (event.type === "batch.result") summary = event;
      else if (event.task_id !== undefined) taskEvents.push(event);
    }
    if (!summary) {
      problems.push(`${file} has no batch.result line: the shard did not finish`);
      continue;
    }
    // A shard that could not run says why in its own problems.
    for (const p of summary.problems) problems.push(`${file}: ${p}`);
    if (summary.shard) {
      shardCount ??= summary.shard.count;
      if (summary.shard.count !== shardCount)
        problems.push(
          `${file} is shard ${summary.shard.index}/${summary.shard.count}, but another file is of ${shardCount} shards`,
        );
      const before = shardFiles.get(summary.shard.index);
      if (before) problems.push(`shard ${summary.shard.index} appears twice: ${before} and ${file}`);
      shardFiles.set(summary.shard.index, file);
    }
    // A task already merged from another file is reported, and its second copy left out of the stream.
    const fresh = new Set<string>();
    for (const task of summary.tasks) {
      const before = seen.get(task.id);
      if (before) {
        problems.push(`task ${task.id} appears twice: in ${before} and in ${file}`);
        continue;
      }
      seen.set(task.id, file);
      fresh.add(task.id);
      outcomes.push(task.error === undefined ? { ...task, error: errorFromResult(taskEvents, task.id) } : task);
    }
    for (const event of taskEvents) if (fresh.has(event.task_id!)) events.push(event);
    cost += summary.cost_usd;
    duration = Math.max(duration, summary.duration_ms);
    addUsage(usage, summary.usage);
  }
  if (shardCount !== null)
    for (let i = 1; i <= shardCount; i++) if (!shardFiles.has(i)) problems.push(`shard ${i}/${shardCount} is missing`);
  if (tasksFile) {
    if ("error" in tasksFile) problems.push(`--tasks: cannot read ${tasksFile.file}: ${tasksFile.error}`);
    const parsed = "error" in tasksFile ? { tasks: [], problems: [] } : parseTasks(tasksFile.text);
    for (const p of parsed.problems) problems.push(`${tasksFile.file}:${p.line}: ${p.message}`);
    for (const task of parsed.tasks) if (!seen.has(task.id)) problems.push(`task ${task.id} is missing`);
    const order = new Map(parsed.tasks.map((t, i) => [t.id, i]));
    outcomes.sort((a, b) => (order.get(a.id) ?? Infinity) - (order.get(b.id) ?? Infinity));
  }
  return {
    events,
    end: {
      tasks: outcomes,
      usage,
      costUsd: cost,
      durationMs: duration,
      shard: null,
      problems,
      // A shard the budget stopped reported its pending tasks as not run with the budget's class:
      // the merged batch was stopped by it.
      stop: outcomes.some((t) => t.class === "budget_exceeded" && t.run === "not_run") ? "budget_exceeded" : null,
    },
  };
}
