// A batch: every task a turn in its own session, `concurrency` at once, on the backends the caller
// made (one warm server per sandbox policy), through the many-turn runner. Every event is marked with its task id,
// each task's result also with the digest --resume compares; the batch ends with one batch.result.
// A batch budget stops the running tasks the way a budget stops a turn and reports the pending ones
// as not run; a signal does the same with its class.

import type { BatchResult, OcEvent, ResultEvent, TaskOutcome } from "../../contract/schema.js";
import { addUsage, emptyUsage } from "../../contract/usage.js";
import { stopClass } from "../../domain/outcome/many-turns-end.js";
import type { Backend, BackendMaker } from "../../engine/backend.js";
import type { TurnControl } from "../../engine/control.js";
import { runTurns, type TurnJob } from "../../engine/run-turns.js";
import type { ResolvedTurn, WholeLimits } from "../../plan/resolve-options.js";
import { writeBatchResult } from "./summary.js";
import type { Task } from "./tasks.js";

/** A task to run, with its options resolved before anything ran (and its backend, when not the batch's). */
export type PlannedTask = { task: Task; options: ResolvedTurn; backend?: Backend | BackendMaker };

export type BatchPlan = {
  /** Every task of the file (or shard), in order: what the summary lists. */
  tasks: Task[];
  /** The tasks to run, in order. */
  run: PlannedTask[];
  /** Tasks that succeeded in the stream given to --resume: not run again. */
  skipped: Map<string, TaskOutcome>;
  /** Their events from that stream, written first, their usage and cost counted in the totals. */
  carried?: OcEvent[];
  /** The backend of tasks that bring none; null when every task brings its own. */
  backend: Backend | null;
  concurrency: number;
  limits: WholeLimits;
  shard: BatchResult["shard"];
};

export type BatchHooks = {
  write(event: OcEvent): void;
  started?(task: Task): void;
  finished?(task: Task, result: ResultEvent, run: TaskOutcome["run"]): void;
};

export async function runBatch(plan: BatchPlan, hooks: BatchHooks, control: TurnControl): Promise<BatchResult> {
  // The totals: the carried tasks' first, then what runs now.
  const carriedUsage = emptyUsage();
  let carriedCost = 0;
  for (const event of plan.carried ?? []) {
    hooks.write(event);
    if (event.type === "result") {
      addUsage(carriedUsage, event.usage);
      carriedCost += event.cost_usd;
    }
  }
  const jobs = plan.run.map(({ task, options, backend }): TurnJob & { task: Task } => ({
    task,
    cwd: options.placement.dir,
    ...(backend ? { backend } : {}),
    options: () => options,
    mark: (event) =>
      event.type === "result"
        ? { ...event, task_id: task.id, task_digest: task.digest }
        : { ...event, task_id: task.id },
  }));
  const run = await runTurns(
    { jobs, backend: plan.backend, concurrency: plan.concurrency, limits: plan.limits, reportNotRun: true },
    {
      sink: hooks.write,
      started: (job) => hooks.started?.(job.task),
      finished: ({ job, result, run }) => hooks.finished?.(job.task, result, run),
    },
    control,
  );
  addUsage(carriedUsage, run.usage);
  const outcomes = new Map<string, TaskOutcome>(plan.skipped);
  for (const { job, result, run: how } of run.turns) {
    outcomes.set(job.task.id, {
      id: job.task.id,
      class: result.class,
      exit_code: result.exit_code,
      cost_usd: result.cost_usd,
      duration_ms: result.duration_ms,
      digest: job.task.digest,
      run: how,
      error: result.error ? { name: result.error.name, message: result.error.message } : null,
      ...(result.attempts !== undefined ? { attempts: result.attempts } : {}),
    });
  }
  return writeBatchResult(
    {
      tasks: plan.tasks.map((t) => outcomes.get(t.id)!),
      usage: carriedUsage,
      costUsd: carriedCost + run.costUsd,
      durationMs: run.durationMs,
      shard: plan.shard,
      problems: [],
      stop: run.stop ? stopClass(run.stop) : null,
    },
    hooks.write,
  );
}
