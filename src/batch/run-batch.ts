// Runs a batch: each task a turn in its own session on one warm server (started here and stopped
// at the end, or the caller's --attach), at most `concurrency` at once, each through the same turn
// engine as a single turn. Every event is marked with its task id; each task ends with its own
// result; the batch ends with one batch.result. A batch budget stops the running tasks the way a
// budget stops a turn and reports the pending ones as not run; a signal does the same with its class.
import { resolve } from "node:path";
import { EXIT_CODES } from "../contract/exit-codes.js";
import type { BatchResult, OcEvent, ResultEvent, TaskOutcome } from "../contract/schema.js";
import { type BudgetLimit, type StopReason, stopClass } from "../outcome/classify.js";
import { ConfigError } from "../outcome/errors.js";
import { TurnControl } from "../turn/control.js";
import { executeTurn } from "../turn/execute.js";
import { failedStart } from "../turn/failed-start.js";
import { resolveTurnOptions } from "../turn/resolve-options.js";
import { batchResult } from "./summary.js";
import type { Task } from "./tasks.js";
import { addUsage, emptyUsage } from "../contract/usage.js";

/** What every task gets unless its line says otherwise. */
export type TaskDefaults = {
  dir: string;
  model?: string;
  agent?: string;
  allow?: string[];
  deny?: string[];
  auto?: boolean;
  maxSteps?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  timeoutMs?: number;
};

export type BatchPlan = {
  tasks: Task[];
  /** Tasks that succeeded in the stream given to --resume: not run again. */
  skipped: Map<string, TaskOutcome>;
  url: string;
  env: NodeJS.ProcessEnv;
  concurrency: number;
  defaults: TaskDefaults;
  budget: { maxCostUsd: number | null; maxTokens: number | null };
  shard: BatchResult["shard"];
};

export type BatchHooks = {
  write(event: OcEvent): void;
  started?(task: Task): void;
  finished?(task: Task, result: ResultEvent, run: TaskOutcome["run"]): void;
};

export type RunningBatch = {
  done: Promise<BatchResult>;
  /** Stop the batch: running tasks are stopped for this reason, pending ones are not run. */
  stop(reason: StopReason): void;
};

export function runBatch(plan: BatchPlan, hooks: BatchHooks): RunningBatch {
  const startedAt = Date.now();
  const running = new Map<string, TurnControl>();
  const outcomes = new Map<string, TaskOutcome>();
  const usage = emptyUsage();
  let cost = 0;
  let stopped: StopReason | null = null;

  const stop = (reason: StopReason) => {
    stopped ??= reason;
    for (const control of running.values()) control.abort(reason);
  };

  /** Crossing a batch budget stops the batch once; a batch already stopping has nothing to check. */
  const checkBudget = () => {
    if (stopped) return;
    const { maxCostUsd, maxTokens } = plan.budget;
    const crossed: [BudgetLimit, string, number, number] | null =
      maxCostUsd !== null && cost > maxCostUsd
        ? ["cost_usd", "--max-cost-usd", maxCostUsd, cost]
        : maxTokens !== null && usage.total > maxTokens
          ? ["tokens", "--max-tokens", maxTokens, usage.total]
          : null;
    if (!crossed) return;
    const [limit, option, max, used] = crossed;
    stop({ kind: "budget", limit, max, used, whole: { option, scope: "batch" } });
  };

  /**
   * A task's workspace: its own `dir`, taken from the batch's --dir when relative (a tasks file of
   * `packages/a`, `packages/b` runs against whichever checkout --dir names), else --dir itself.
   */
  const workspaceOf = (task: Task) => resolve(plan.defaults.dir, task.dir ?? ".");

  /** Every event of a task carries its id; its result also the digest --resume compares. */
  const markFor = (task: Task) => (event: OcEvent) =>
    hooks.write(
      event.type === "result"
        ? { ...event, task_id: task.id, task_digest: task.digest }
        : { ...event, task_id: task.id },
    );

  const record = (task: Task, result: ResultEvent, run: TaskOutcome["run"]) => {
    outcomes.set(task.id, {
      id: task.id,
      class: result.class,
      exit_code: result.exit_code,
      cost_usd: result.cost_usd,
      duration_ms: result.duration_ms,
      digest: task.digest,
      run,
    });
    hooks.finished?.(task, result, run);
  };

  const notRun = (task: Task, reason: StopReason) => {
    const why =
      reason.kind === "budget"
        ? `the batch budget (${reason.whole?.option} ${reason.max}) was crossed before this task started`
        : `the batch was stopped (${"signal" in reason ? reason.signal : reason.kind}) before this task started`;
    const cls = stopClass(reason);
    const result = failedStart({ name: "NotRun", message: why }, { cwd: workspaceOf(task) }, (event) =>
      markFor(task)(event.type === "result" ? { ...event, class: cls, exit_code: EXIT_CODES[cls] } : event),
    );
    record(task, { ...result, class: cls, exit_code: EXIT_CODES[cls] }, "not_run");
  };

  const runTask = async (task: Task) => {
    const control = new TurnControl();
    running.set(task.id, control);
    hooks.started?.(task);
    const d = plan.defaults;
    let result: ResultEvent;
    const mark = markFor(task);
    try {
      const resolved = resolveTurnOptions({
        prompt: task.prompt,
        attach: plan.url,
        env: plan.env,
        dir: workspaceOf(task),
        model: task.model ?? d.model,
        agent: task.agent ?? d.agent,
        variant: task.variant,
        allow: task.allow ?? d.allow,
        deny: task.deny ?? d.deny,
        auto: task.auto ?? d.auto,
        // A task's files are relative to its workspace, like everything else the task names.
        files: task.files?.map((f) => resolve(workspaceOf(task), f)),
        maxSteps: task.max_steps ?? d.maxSteps,
        maxTokens: task.max_tokens ?? d.maxTokens,
        maxCostUsd: task.max_cost_usd ?? d.maxCostUsd,
        timeoutMs: task.timeoutMs ?? d.timeoutMs,
      });
      result = await executeTurn(
        resolved,
        (event) => {
          if (event.type === "step.finished") {
            addUsage(usage, event.usage);
            cost += event.cost_usd;
            checkBudget();
          }
          mark(event);
        },
        control,
      );
    } catch (error) {
      // An option of the task's own line that does not resolve: that task's config_error, not the batch's.
      if (!(error instanceof ConfigError)) throw error;
      result = failedStart(error, { cwd: workspaceOf(task) }, mark);
    } finally {
      running.delete(task.id);
    }
    record(task, result, "ran");
  };

  const done = (async (): Promise<BatchResult> => {
    const queue = plan.tasks.filter((t) => !plan.skipped.has(t.id));
    const worker = async () => {
      for (let task = queue.shift(); task; task = queue.shift()) {
        if (stopped) notRun(task, stopped);
        else await runTask(task);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(plan.concurrency, queue.length)) }, worker));
    for (const [id, outcome] of plan.skipped) outcomes.set(id, outcome);
    const tasks = plan.tasks.map((t) => outcomes.get(t.id)!);
    const reason = stopped as StopReason | null;
    return batchResult({
      tasks,
      usage,
      costUsd: cost,
      durationMs: Date.now() - startedAt,
      shard: plan.shard,
      problems: [],
      stop: reason ? stopClass(reason) : null,
    });
  })();

  return { done, stop };
}
