// Runs one turn's upstream source: feeds its lines to the turn core, enforces the timeouts and
// budgets, and stops the source through one path (signals, timeouts, budgets, a blocked prompt, a
// bug of ours). While the consumer is behind, the source is held back (flow control). Returns what
// it found; it writes no shared state.

import type { UpstreamSource } from "../domain/events/upstream-source.js";
import { checkBudgets, turnUse } from "../domain/outcome/budget.js";
import type { StopReason, TurnEnd } from "../domain/outcome/classify.js";
import { errorText } from "../domain/outcome/errors.js";
import { formatDuration } from "../kernel/duration.js";
import type { ResolvedTurn } from "../plan/resolve-options.js";
import type { ProcessEnd } from "../sys/process.js";
import type { TurnControl } from "./control.js";
import { TurnTimers } from "./timers.js";
import type { TurnCore } from "./turn-core.js";

const CONFIG_ERROR_GRACE_MS = 3000;

export type SourceRun = {
  stop: StopReason | null;
  process: ProcessEnd | null;
  /** The source never started. */
  failure: { name: string; message: string } | null;
  /** The source was lost mid-turn. */
  lost: { name: string; message: string } | null;
  internalError: { message: string } | null;
};

/** How a source run ended, as the classifier reads it before the work after the turn. */
export const sourceEnd = (ran: SourceRun): TurnEnd => ({
  stop: ran.stop,
  launchError: ran.failure,
  internalError: ran.internalError,
  process: ran.process,
  outputError: null,
  lost: ran.lost,
});

export async function runSource(
  source: UpstreamSource,
  options: ResolvedTurn,
  core: TurnCore,
  control: TurnControl,
  /** When the turn's --timeout fires (epoch ms): a repair after --verify gets what is left of it. */
  deadline: number | null = null,
): Promise<SourceRun> {
  const { normalizer } = core;
  const warned = new Set<"steps" | "tokens" | "cost_usd">();
  const budgets = options.turn.budgets;
  const limits = {
    turn: options.turn.timeout,
    startup: options.placement.startupTimeout,
    idle: options.turn.idleTimeout,
  };
  let stopped: StopReason | null = null;
  let internalError: SourceRun["internalError"] = null;
  let sawJson = false;

  // The one abort path: signals, timeouts and budgets all come through here.
  const stop = (reason: StopReason) => {
    if (stopped !== null) {
      // A second Ctrl-C: no more grace.
      if (reason.kind === "interrupted") running.stop(true);
      return;
    }
    stopped = reason;
    // From here on the source is read whether or not anyone keeps up: a consumer that stopped
    // reading must not keep a dying turn from ending.
    running.hold(false);
    running.stop(false);
  };

  const turnMs =
    deadline === null || options.turn.timeout === null
      ? (options.turn.timeout?.ms ?? null)
      : Math.max(1, deadline - Date.now());
  const timers = new TurnTimers(
    {
      turnMs,
      startupMs: source.ready ? null : (limits.startup?.ms ?? null),
      idleMs: limits.idle?.ms ?? null,
      idleFromFirstOutput: source.startsOpencode === true,
    },
    (kind, ms) => {
      // Silence while opencode waits to retry a failed model call is the provider's doing, not a stall.
      const waiting = normalizer.facts.waitingToRetry;
      if (kind === "idle" && waiting)
        return stop({
          kind: "retry_wait",
          cause: waiting.cause,
          waitMs: null,
          limit: `${limits.idle?.option} ${formatDuration(ms, "exact")}`,
        });
      // The turn's timeout is reported as the user set it, however much of it this source had left.
      const limit = limits[kind];
      stop({
        kind: "timeout",
        timeout: kind,
        ms: kind === "turn" ? (limit?.ms ?? ms) : ms,
        ...(limit ? { option: limit.option } : {}),
      });
    },
  );

  // A bug in our own line handling must not crash the process or lose the result: record it,
  // stop the turn, and let the classifier report internal_error.
  const guard =
    <T>(handle: (value: T) => void) =>
    (value: T) => {
      try {
        handle(value);
      } catch (error) {
        internalError ??= { message: errorText(error) };
        stop({ kind: "internal" });
      }
    };

  // Some releases (1.0) report a configuration error on stderr and then wait forever; when that
  // happens before any JSON event, give opencode a moment, then stop it.
  let configGrace: NodeJS.Timeout | null = null;
  const running = source.start({
    eventLine: guard((line) => {
      timers.activity();
      core.eventLine(line);
      if (!sawJson && normalizer.facts.stream.json_lines > 0) {
        sawJson = true;
        timers.firstJson();
      } else if (!sawJson) timers.signOfLife();
      if (normalizer.facts.blockedOnPrompt) stop({ kind: "blocked" });
      const tooLong = retryWaitTooLong(normalizer.facts.waitingToRetry, options, deadline);
      if (tooLong) stop(tooLong);
      const check = checkBudgets(turnUse(normalizer.facts), budgets, warned);
      for (const w of check.warnings) normalizer.warning(w.code, w.message);
      if (check.exceeded) stop(check.exceeded);
    }),
    logLine: guard((text) => {
      timers.activity();
      if (!sawJson) timers.signOfLife();
      core.logLine(text);
      options.turn.onStderrLine?.(options.turn.redactor.text(text));
      if (!sawJson && configGrace === null && normalizer.facts.stderrConfigError) {
        configGrace = setTimeout(() => {
          if (!sawJson) stop({ kind: "blocked" });
        }, CONFIG_ERROR_GRACE_MS);
      }
    }),
  });
  timers.start();
  const unsubscribe = control.subscribe(stop);
  if (control.reason) stop(control.reason);
  const hold = (held: boolean) => {
    if (held && stopped !== null) return;
    running.hold(held);
    timers.hold(held);
  };
  const unsubscribeFlow = control.onBackpressure(hold);
  if (control.isHeld) hold(true);

  try {
    const ended = await running.done;
    return { stop: stopped, process: ended.process, failure: ended.failure, lost: ended.lost, internalError };
  } finally {
    timers.clear();
    if (configGrace) clearTimeout(configGrace);
    unsubscribe();
    unsubscribeFlow();
  }
}

/**
 * A wait opencode announced (a server's retry event says when it will call again) that the turn
 * cannot afford: past --timeout, or, with --retry, longer than --retry-max-delay (oc-exec's own
 * attempt would come sooner than opencode's).
 */
function retryWaitTooLong(
  waiting: { cause: string; until: number | null } | null,
  options: ResolvedTurn,
  deadline: number | null,
): StopReason | null {
  if (!waiting || waiting.until === null) return null;
  const waitMs = Math.max(0, waiting.until - Date.now());
  if (deadline !== null && waiting.until > deadline)
    return {
      kind: "retry_wait",
      cause: waiting.cause,
      waitMs,
      limit: `${options.turn.timeout?.option} ${formatDuration(options.turn.timeout?.ms ?? 0, "exact")}`,
    };
  if (options.turn.retry > 0 && waitMs > options.turn.retryMaxDelay.ms)
    return {
      kind: "retry_wait",
      cause: waiting.cause,
      waitMs,
      limit: `${options.turn.retryMaxDelay.option} ${formatDuration(options.turn.retryMaxDelay.ms, "exact")}`,
    };
  return null;
}
