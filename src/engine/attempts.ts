// The attempts of one turn (--retry, --fallback-model): run the opened source; when the attempt
// failed transiently (domain/outcome/transient.ts), wait (exponential, jittered, within --timeout), then
// open the next attempt: in the same session, pinned by its id, with a short message saying why
// the last one stopped (never --continue; a --fork happened once, on the first), or from the start
// when no session existed yet. The fallback model takes over once the model's attempts are spent.
// One turn core hears every attempt, so usage, cost, steps and budgets cover them all and only the
// last attempt decides the class. Returns what it found.

import type { OutcomeClass } from "../contract/exit-codes.js";
import type { EventOf } from "../contract/schema.js";
import { classifyOutcome } from "../domain/outcome/classify.js";
import { retryWait, transientFailure } from "../domain/outcome/transient.js";
import { formatDuration } from "../kernel/duration.js";
import { inSession, type ResolvedTurn, type TurnSettings, withModel } from "../plan/resolve-options.js";
import type { Backend, OpenedTurn, TurnInput } from "./backend.js";
import type { TurnControl } from "./control.js";
import { runSource, type SourceRun, sourceEnd } from "./run-source.js";
import { schemaInstruction } from "./structured-output.js";
import type { TurnCore } from "./turn-core.js";

type FailedAttempt = NonNullable<EventOf<"result">["failed_attempts"]>[number];

export type Attempts = {
  ran: SourceRun | null;
  /** The last attempt's opened turn: its session operations and its input. */
  opened: OpenedTurn & { input: TurnInput };
  /** A later attempt that could not be opened: the turn ends with it. */
  problem: { name: string; message: string } | null;
  refused: (() => string[])[];
  attempts: number;
  failed: FailedAttempt[];
};

/**
 * Why a later attempt could not open that another may get past: the server is down (restarting), or
 * it refuses the password the first attempt was let in with (restarted, its new record not written
 * yet).
 */
const SERVER_COMING_BACK = new Set(["ServerUnreachable", "ServerUnauthorized"]);

/** The model of each attempt, in order: the model's (1 + retry), then the fallback's. */
export function attemptModels(options: Pick<TurnSettings, "model" | "retry" | "fallbackModel">): (string | null)[] {
  const own = Array<string | null>(options.retry + 1).fill(options.model);
  return options.fallbackModel
    ? [...own, ...Array<string>(Math.max(1, options.retry)).fill(options.fallbackModel)]
    : own;
}

/** What the next attempt is told when it goes on in the session the last one used. */
export function resumePrompt(cause: { name: string; message: string }, schema: string): string {
  return `Your previous attempt at this task was interrupted (${cause.name}: ${cause.message}). Continue from where it stopped and finish the task.${schema}`;
}

export async function runAttempts(
  first: OpenedTurn & { input: TurnInput },
  context: {
    options: ResolvedTurn;
    core: TurnCore;
    control: TurnControl;
    backend: Backend;
    deadline: number | null;
    /**
     * The attempt this run starts in: 1 for the turn; for a --verify repair, the turn's last (a
     * repair goes on in it), so a retry of the repair is the turn's next attempt. Each run gets
     * the whole --retry (and fallback) of its own.
     */
    firstAttempt?: number;
  },
): Promise<Attempts> {
  const { options, core, control, backend, deadline } = context;
  const base = (context.firstAttempt ?? 1) - 1;
  const models = attemptModels(options.turn);
  const facts = core.normalizer.facts;
  const refused: (() => string[])[] = [];
  const failed: FailedAttempt[] = [];
  // The attempt to run; null when it could not be opened because the server was coming back (being
  // restarted, say): that is transient too.
  let opened: (OpenedTurn & { input: TurnInput }) | null = first;
  let last = first;
  let unreachable: { name: string; message: string } | null = null;
  let ran: SourceRun | null = null;
  let attempt = base + 1;
  const result = (problem: Attempts["problem"]): Attempts => ({
    ran,
    opened: last,
    problem,
    refused,
    attempts: attempt,
    failed,
  });
  for (;;) {
    let failure: { class: OutcomeClass; cause: { name: string; message: string } };
    if (opened) {
      if (opened.refused) refused.push(opened.refused);
      if (control.reason !== null) break;
      ran = await runSource(opened.source, options, core, control, deadline);
      if (attempt - base >= models.length) break;
      // Settle what this attempt left pending, then judge it as if it were the last.
      core.normalizer.finish();
      const outcome = classifyOutcome(facts, sourceEnd(ran), options.turn.rules);
      const transient = transientFailure(outcome, sourceEnd(ran));
      if (!transient) break;
      failure = { class: outcome.class, cause: transient };
    } else {
      if (attempt - base >= models.length || control.reason !== null) return result(unreachable);
      failure = { class: "agent_error", cause: unreachable! };
    }
    const wait = retryWait(attempt - base + 1, options.turn.retryDelayMs, options.turn.retryMaxDelay.ms);
    const { cause } = failure;
    // No time left for another attempt: the class stands, and the stream says why.
    if (deadline !== null && Date.now() + wait >= deadline) {
      core.normalizer.warning(
        "retry_skipped",
        `attempt ${attempt} failed (${cause.name}: ${cause.message}); waiting ${formatDuration(wait)} for attempt ${attempt + 1} would pass ${options.turn.timeout?.option} ${formatDuration(options.turn.timeout?.ms ?? 0, "exact")}`,
      );
      if (!opened) return result(unreachable);
      break;
    }
    const sessionId = facts.sessionId ?? last.ops.sessionId ?? facts.logSessionId;
    const model = models[attempt - base] ?? null;
    core.emit({
      type: "retry",
      failed_attempt: attempt,
      class: failure.class,
      name: cause.name,
      message: cause.message,
      wait_ms: wait,
      model,
      resumed: sessionId !== null,
    });
    failed.push({
      attempt,
      class: failure.class,
      name: cause.name,
      message: cause.message,
      model: facts.model ?? models[attempt - base - 1] ?? null,
    });
    if (await interruptedDuring(wait, control)) break;
    core.normalizer.newAttempt();
    attempt++;
    core.setAttempt(attempt);
    const next =
      sessionId === null
        ? await backend.open(withModel(options, model), first.input)
        : await backend.open(withModel(inSession(options, sessionId), model), {
            prompt: resumePrompt(cause, options.turn.outputSchema ? schemaInstruction(options.turn.outputSchema) : ""),
            title: null,
            policy: first.input.policy,
          });
    if ("problem" in next) {
      if (!SERVER_COMING_BACK.has(next.problem.name)) return result(next.problem);
      opened = null;
      unreachable = next.problem;
      continue;
    }
    opened = { ...next, input: first.input };
    last = opened;
  }
  return result(null);
}

/** Waits; resolves true at once when the turn is stopped meanwhile (a signal). */
function interruptedDuring(ms: number, control: TurnControl): Promise<boolean> {
  return new Promise((resolve) => {
    if (control.reason) return resolve(true);
    const timer = setTimeout(() => {
      unsubscribe();
      resolve(false);
    }, ms);
    const unsubscribe = control.subscribe(() => {
      clearTimeout(timer);
      unsubscribe();
      resolve(true);
    });
  });
}
