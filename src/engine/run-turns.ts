// The one runner of many turns: the single turn's engine (engine/execute.ts) run once per job, on one
// backend made by the caller, `concurrency` at a time, with limits on the whole (budgets summed over
// every turn's steps, one timeout from the start) and a mark on every event (task_id, turn). A batch
// (N at a time) and a conversation (one at a time, in one session) are thin adapters on it.
//
// A stop (a signal through `control`, a crossed limit) stops the running turns for that reason.
// Jobs not started then are reported as not run, with the stop's class (a batch), or never read (a
// conversation stops reading its input). Returns what it found; the adapter writes the summary.

import type { OcEvent, ResultEvent, Usage } from "../contract/schema.js";
import { addUsage, emptyUsage } from "../contract/usage.js";
import { type BudgetLimit, budgetCost, budgetTokens, checkBudgets } from "../domain/outcome/budget.js";
import type { StopReason } from "../domain/outcome/classify.js";
import { ConfigError } from "../domain/outcome/errors.js";
import type { ResolvedTurn, WholeLimits } from "../plan/resolve-options.js";
import type { Backend, BackendMaker } from "./backend.js";
import { TurnControl } from "./control.js";
import { executeTurn } from "./execute.js";
import { failedStart } from "./failed-start.js";

export type TurnJob = {
  /** Marks every event of this turn (task_id, turn; the task's digest on its result). */
  mark(event: OcEvent): OcEvent;
  /**
   * The turn's options, resolved as it starts. `earlier`: the results of the turns that ended
   * before it, in order (a conversation continues the session they ran in). A ConfigError thrown
   * here is this turn's config_error, not the whole's.
   */
  options(earlier: readonly ResultEvent[]): ResolvedTurn;
  /** Where a turn that never started says it was (run.started's cwd). */
  cwd: string;
  /**
   * The backend of this turn when it is not the plan's (a batch task with a sandbox of its own), or
   * the maker of one for this turn alone (a task through an ACP agent).
   */
  backend?: Backend | BackendMaker;
};

export type ManyTurnsPlan<J extends TurnJob> = {
  jobs: Iterable<J> | AsyncIterable<J>;
  /** The backend of jobs that bring none; null when every job brings its own. */
  backend: Backend | null;
  concurrency: number;
  limits: WholeLimits;
  /** Report each job not started when a stop came as not run (a batch); else stop taking jobs. */
  reportNotRun: boolean;
  /** Called once when the whole is stopped (a conversation stops reading its input). */
  onStop?(): void;
};

export type FinishedTurn<J> = { job: J; result: ResultEvent; run: "ran" | "not_run" };

export type ManyTurnsHooks<J> = {
  /** Every event of every turn, marked, as it happens. */
  sink(event: OcEvent): void;
  started?(job: J): void;
  finished?(turn: FinishedTurn<J>): void;
};

export type ManyTurnsRun<J> = {
  /** In the order they ended. */
  turns: FinishedTurn<J>[];
  usage: Usage;
  costUsd: number;
  durationMs: number;
  /** What stopped the whole early, if anything did. */
  stop: StopReason | null;
};

export async function runTurns<J extends TurnJob>(
  plan: ManyTurnsPlan<J>,
  hooks: ManyTurnsHooks<J>,
  control: TurnControl,
): Promise<ManyTurnsRun<J>> {
  const startedAt = Date.now();
  const { limits } = plan;
  const running = new Set<TurnControl>();
  const turns: FinishedTurn<J>[] = [];
  const usage = emptyUsage();
  let cost = 0;
  let steps = 0;
  let stopped: StopReason | null = null;

  const stop = (reason: StopReason) => {
    const first = stopped === null;
    stopped ??= reason;
    // A second signal reaches the running turns too: a second Ctrl-C stops them at once.
    for (const turn of running) turn.abort(reason);
    if (first) plan.onStop?.();
  };
  const warned = new Set<BudgetLimit>();
  const checkWhole = () => {
    if (stopped) return;
    const used = { steps, tokens: budgetTokens(usage), cost_usd: budgetCost(cost) };
    const { exceeded } = checkBudgets(used, limits.budgets, warned);
    if (exceeded) stop({ ...exceeded, whole: { option: limits.budgets.names[exceeded.limit], scope: limits.scope } });
  };
  const { timeout } = limits;
  const timer =
    timeout === null
      ? null
      : setTimeout(
          () =>
            stop({
              kind: "timeout",
              timeout: "turn",
              ms: timeout.ms,
              whole: { option: timeout.option, scope: limits.scope },
            }),
          timeout.ms,
        );
  const unsubscribe = control.subscribe(stop);
  if (control.reason) stop(control.reason);

  const finish = (turn: FinishedTurn<J>) => {
    turns.push(turn);
    hooks.finished?.(turn);
  };

  const notRun = (job: J, reason: StopReason) =>
    finish({
      job,
      run: "not_run",
      result: failedStart(null, { cwd: job.cwd, notRun: { stop: reason, scope: limits.scope } }, (event) =>
        hooks.sink(job.mark(event)),
      ),
    });

  const runJob = async (job: J) => {
    const turn = new TurnControl();
    running.add(turn);
    // The reader's flow control reaches every running turn.
    const releaseFlow = control.onBackpressure((held) => turn.backpressure(held));
    if (control.isHeld) turn.backpressure(true);
    hooks.started?.(job);
    const sink = (event: OcEvent) => {
      hooks.sink(job.mark(event));
      if (event.type === "step.started") steps++;
      else if (event.type === "step.finished") {
        addUsage(usage, event.usage);
        cost += event.cost_usd;
      } else return;
      checkWhole();
    };
    let result: ResultEvent;
    const own = typeof job.backend === "function" ? job.backend(turn.startup) : null;
    try {
      const backend = own ?? job.backend ?? plan.backend;
      if (backend === null || typeof backend === "function") throw new Error("a job with no backend");
      result = await executeTurn(job.options(turns.map((t) => t.result)), backend, sink, turn);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      result = failedStart(error, { cwd: job.cwd }, (event) => hooks.sink(job.mark(event)));
    } finally {
      running.delete(turn);
      releaseFlow();
      if (own) await closeOwn(own);
    }
    finish({ job, result, run: "ran" });
  };

  const jobs = iteratorOf(plan.jobs);
  const worker = async () => {
    for (;;) {
      if (stopped && !plan.reportNotRun) return;
      const next = await jobs.next();
      if (next.done) return;
      if (stopped) notRun(next.value, stopped);
      else await runJob(next.value);
    }
  };
  const workers = Array.isArray(plan.jobs) ? Math.min(plan.concurrency, plan.jobs.length) : plan.concurrency;
  try {
    await Promise.all(Array.from({ length: Math.max(1, workers) }, worker));
  } finally {
    if (timer) clearTimeout(timer);
    unsubscribe();
  }
  return { turns, usage, costUsd: cost, durationMs: Date.now() - startedAt, stop: stopped };
}

/** One iterator the workers share: each job goes to exactly one of them. */
function iteratorOf<J>(jobs: Iterable<J> | AsyncIterable<J>): AsyncIterator<J> {
  if (Symbol.asyncIterator in jobs) return jobs[Symbol.asyncIterator]();
  const sync = jobs[Symbol.iterator]();
  return { next: async () => sync.next() };
}

/** Ends a turn's own backend; one whose making failed holds nothing (the turn reported why). */
async function closeOwn(made: Promise<Backend>): Promise<void> {
  const backend = await made.catch(() => null);
  await backend?.close?.();
}
