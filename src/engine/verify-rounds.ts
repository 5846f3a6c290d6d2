// The rounds of --verify after a turn that succeeded: run the checks; when one fails, send the
// agent back in the same session with what it printed (the backend opens a follow-up turn pinned
// to the session id: never --continue, never another fork), with the same attempts as the turn
// after a transient failure (--retry), and check again, up to verifyAttempts repairs. One turn core hears it all, so usage, cost, steps and budgets cover
// every round, and the turn's one --timeout covers the repairs and the checks' own time.
// Returns what it found; the caller classifies.

import { type CheckFailure, classifyOutcome, type StopReason, type TurnEnd } from "../domain/outcome/classify.js";
import type { ResultMeta } from "../domain/outcome/result.js";
import { inSession, type ResolvedTurn, turnTimedOut } from "../plan/resolve-options.js";
import { type Attempts, runAttempts } from "./attempts.js";
import type { Backend, OpenedTurn, TurnInput } from "./backend.js";
import type { TurnControl } from "./control.js";
import { type SourceRun, sourceEnd } from "./run-source.js";
import { schemaInstruction } from "./structured-output.js";
import type { TurnCore } from "./turn-core.js";
import { type CheckRun, repairPrompt, runCheck } from "./verify.js";

export type Verified = {
  /** The last source run: a repair's, when the agent was sent back. */
  ran: SourceRun;
  verification: ResultMeta["verification"];
  outcome: NonNullable<TurnEnd["verification"]>;
  /** A stop of the turn during a check (a signal, --timeout). */
  stop: StopReason | null;
  /** A repair turn that could not be opened. */
  problem: { name: string; message: string } | null;
  /** The follow-up turns' refusals, to add to the first one's. */
  refused: (() => string[])[];
  /** The turn's last attempt number, its repairs' retries included. */
  attempts: number;
  /** The repairs' failed attempts (--retry), to add to the turn's. */
  failed: Attempts["failed"];
};

/** Whether the turn, as it stands, would end in success (what the checks are for). */
export function wouldSucceed(core: TurnCore, ran: SourceRun, options: ResolvedTurn): boolean {
  return classifyOutcome(core.normalizer.facts, sourceEnd(ran), options.turn.rules).class === "success";
}

export async function verifyRounds(
  first: SourceRun,
  context: {
    options: ResolvedTurn;
    core: TurnCore;
    control: TurnControl;
    backend: Backend;
    opened: OpenedTurn;
    input: TurnInput;
    /** When --timeout fires (epoch ms), or null. */
    deadline: number | null;
    /** The turn's attempts so far: a repair retried after a transient failure counts on from there. */
    attempts: number;
  },
): Promise<Verified> {
  const { options, core, control, backend, opened, input, deadline } = context;
  const verify = options.turn.verify!;
  const refused: (() => string[])[] = [];
  const tally = { attempts: context.attempts, failed: [] as Attempts["failed"] };
  let ran = first;
  for (let round = 1; ; round++) {
    const checks: CheckRun[] = [];
    let failed: CheckRun | null = null;
    for (const command of verify.commands) {
      core.emit({ type: "verify.started", command, round });
      const { stop, ...run } = await runCheck(command, {
        cwd: options.placement.dir,
        env: options.placement.env,
        // The turn's --timeout ends a check too (stopsOf), as a timeout of the turn.
        timeoutMs: verify.timeout?.ms ?? null,
        killAfterMs: options.turn.killAfterMs,
        redactor: options.turn.redactor,
        ...(backend.wrapCommand ? { wrap: (c) => backend.wrapCommand!(c) } : {}),
        onStop: (end) => stopsOf(control, deadline, options, end),
      });
      core.emit({ type: "verify.finished", ...run, round, passed: run.exit_code === 0 });
      checks.push(run);
      if (stop) return done(ran, round, checks, null, { stop, refused }, tally);
      if (run.exit_code !== 0) {
        failed = run;
        break;
      }
    }
    if (!failed) return done(ran, round, checks, null, { refused }, tally);
    const failure: CheckFailure = {
      command: failed.command,
      exitCode: failed.exit_code,
      output: failed.output,
      rounds: round,
      option: verify.option,
    };
    // The shell could not run it at all: the command is wrong, not the agent's work.
    if (failed.exit_code === 126 || failed.exit_code === 127)
      return done(ran, round, checks, { failed: null, unrunnable: failure }, { refused }, tally);
    const sessionId = core.normalizer.facts.sessionId ?? opened.ops.sessionId ?? core.normalizer.facts.logSessionId;
    if (round > verify.attempts || sessionId === null || control.reason !== null)
      return done(ran, round, checks, { failed: failure, unrunnable: null }, { refused }, tally);
    const repairOptions = { ...inSession(options, sessionId), files: { ...options.turn.files, paths: [] } };
    const repairInput: TurnInput = {
      prompt: repairPrompt(failed, options.turn.outputSchema ? schemaInstruction(options.turn.outputSchema) : ""),
      title: null,
      policy: input.policy,
    };
    // A repair that could not be opened (or reopened after a transient failure): the check failed.
    const unopened = (problem: NonNullable<Verified["problem"]>) =>
      done(ran, round, checks, { failed: failure, unrunnable: null }, { problem, refused }, tally);
    const repair = await backend.open(repairOptions, repairInput);
    if ("problem" in repair) return unopened(repair.problem);
    // A repair is a turn in the session like the first: a transient failure of it gets the same
    // attempts (--retry, --fallback-model), resumed in the session, counted on from the turn's.
    const tried = await runAttempts(
      { ...repair, input: repairInput },
      { options: repairOptions, core, control, backend, deadline, firstAttempt: tally.attempts },
    );
    refused.push(...tried.refused);
    tally.attempts = tried.attempts;
    tally.failed.push(...tried.failed);
    if (tried.ran) ran = tried.ran;
    if (tried.problem) return unopened(tried.problem);
    if (!wouldSucceed(core, ran, options))
      return done(ran, round, checks, { failed: null, unrunnable: null }, { refused }, tally);
  }
}

function done(
  ran: SourceRun,
  rounds: number,
  checks: CheckRun[],
  outcome: Verified["outcome"] | null,
  more: { stop?: StopReason; problem?: Verified["problem"]; refused: Verified["refused"] },
  tally: Pick<Verified, "attempts" | "failed">,
): Verified {
  const passed = checks.every((c) => c.exit_code === 0);
  return {
    ran,
    verification: { passed, rounds, checks },
    outcome: outcome ?? { failed: null, unrunnable: null },
    stop: more.stop ?? null,
    problem: more.problem ?? null,
    refused: more.refused,
    ...tally,
  };
}

/** What ends a check early: a stop of the turn (a signal), or the turn's --timeout. */
function stopsOf(
  control: TurnControl,
  deadline: number | null,
  options: ResolvedTurn,
  end: (reason: StopReason) => void,
): () => void {
  const unsubscribe = control.subscribe(end);
  if (control.reason) end(control.reason);
  const timer =
    deadline === null
      ? null
      : setTimeout(() => end(turnTimedOut(options.turn.timeout)), Math.max(0, deadline - Date.now()));
  return () => {
    unsubscribe();
    if (timer) clearTimeout(timer);
  };
}
