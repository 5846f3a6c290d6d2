// The one prioritized classification: every way a turn can end maps to exactly one class, checked
// in the fixed order of CLASS_PRECEDENCE (exit-codes.ts). Pure: facts in, outcome out.

import { CLASS_PRECEDENCE, type OutcomeClass } from "../../contract/exit-codes.js";
import type { ErrorDetail, FileChange } from "../../contract/schema.js";
import { formatDuration } from "../../kernel/duration.js";
import type { ProcessEnd } from "../../sys/process.js";
import { redact } from "../events/redact.js";
import type { TurnFacts, UpstreamError } from "../events/turn-facts.js";
import { bugMessage } from "./errors.js";
import { type FailOn, failOnError } from "./fail-on.js";
import { BUDGET_OPTION, type OptionLabels, TIMEOUT_OPTION } from "./labels.js";

export type TimeoutKind = "turn" | "startup" | "idle";
export type BudgetLimit = "steps" | "tokens" | "cost_usd";

/** A limit on many turns together (a batch, a conversation) that stopped this one: its option and scope. */
export type WholeLimit = { option: string; scope: "batch" | "conversation" };

/** Why oc-exec itself stopped the turn. */
export type StopReason =
  | { kind: "interrupted"; signal: string }
  | { kind: "terminated"; signal: string }
  /** `option`: the option that set it, as the caller named it (--idle-timeout, idleTimeoutMs). */
  | { kind: "timeout"; timeout: TimeoutKind; ms: number; option?: string; whole?: WholeLimit }
  | { kind: "budget"; limit: BudgetLimit; max: number; used: number; option?: string; whole?: WholeLimit }
  | { kind: "broken_pipe" }
  /** oc-exec hit a bug while the turn ran; TurnEnd.internalError says which. */
  | { kind: "internal" }
  /** opencode is waiting at an interactive permission prompt that nobody can answer. */
  | { kind: "blocked" }
  /**
   * opencode is waiting to retry a failed model call for longer than the turn allows (a provider's
   * long Retry-After): `limit` names what it would pass, `waitMs` the wait when opencode said it.
   */
  | { kind: "retry_wait"; cause: string; waitMs: number | null; limit: string };

export type TurnEnd = {
  stop: StopReason | null;
  /** A problem found before or while starting opencode: bad flags, workspace, binary. */
  launchError: { name: string; message: string } | null;
  internalError: { message: string } | null;
  process: ProcessEnd | null;
  /** The final answer failed --output-schema. */
  outputError: string | null;
  /** A file oc-exec writes after the turn (-o) was refused: a link planted at it during the turn. */
  refusedWrite?: { name: string; message: string } | null;
  /** The upstream source was lost mid-turn (--attach: the server went away or its stream broke). */
  lost?: { name: string; message: string } | null;
  /** What changed in the workspace during the turn (git, or the tools' writes): --fail-on no-changes reads it. */
  workspaceChanges?: { source: "git" | "tools"; files: FileChange[] } | null;
  /** A stop of many turns together (`stop`) kept this one from starting: it is reported, not run. */
  notRun?: { scope: WholeLimit["scope"] } | null;
  /** --verify: a check still failing when the repairs ran out, or one the shell could not run. */
  verification?: { failed: CheckFailure | null; unrunnable: CheckFailure | null } | null;
};

/** A --verify command that did not pass, for the result's error. */
/** A --verify check that failed, named as the caller names --verify. */
export type CheckFailure = { command: string; exitCode: number | null; output: string; rounds: number; option: string };

/**
 * What the caller asked of a turn's outcome beyond opencode's own end: --fail-on's conditions, and
 * the names its advice gives --allow and --auto. Every other option a message names travels in the
 * stop or the failure it concerns.
 */
export type OutcomeRules = {
  failOn: { conditions: readonly FailOn[]; option: string };
  advice: Pick<OptionLabels, "allow" | "auto">;
  /** What the messages call the agent that ran the turn: opencode, or the ACP agent (gemini). */
  agent: string;
};

export const API_RULES: OutcomeRules = {
  failOn: { conditions: [], option: "failOn" },
  advice: { allow: "allow", auto: "auto" },
  agent: "opencode",
};

export type Outcome = { class: OutcomeClass; error: ErrorDetail | null };

const detail = (name: string, message: string, extra: Partial<ErrorDetail> = {}): ErrorDetail => ({
  name,
  message: redact(message),
  status_code: null,
  retryable: null,
  ...extra,
});

const fromUpstream = (e: UpstreamError): ErrorDetail =>
  detail(e.name, e.message, { status_code: e.statusCode, retryable: e.retryable });

function describeExit(p: ProcessEnd | null, agent: string): string {
  if (!p) return `${agent} did not run`;
  if (p.signal) return `${agent} was killed by ${p.signal}`;
  return `${agent} exited with status ${p.exitCode}`;
}

/** What opencode printed, in terms that agree with result.stream's counts. */
function whatItPrinted(facts: TurnFacts, joiner: "with" | "but"): string {
  const { json_lines: json, other_lines: other } = facts.stream;
  if (facts.events > 0) return joiner === "with" ? " with no error event" : "";
  if (json === 0 && joiner === "with") return " before printing any JSON event";
  if (json === 0) return ` printed no JSON event${other > 0 ? ` (only ${other} non-JSON line(s))` : ""}`;
  const lines = `${json} JSON line${json === 1 ? "" : "s"}`;
  return ` ${joiner === "with" ? "after" : "printed"} ${lines} but no event oc-exec knows (see the warnings)`;
}

/** The end of a check's output, for a message. */
const tailOf = (output: string) => {
  const tail = output.trimEnd().split("\n").slice(-10).join("\n");
  return tail ? `; its output ended with:\n${tail}` : "; it printed nothing";
};

function stderrSuffix(facts: TurnFacts): string {
  const tail = facts.stderrTail.slice(-5).join("\n").trim();
  return tail ? `; its stderr ended with:\n${tail}` : "; it printed nothing on stderr";
}

/** What fired, as the user set it ("--idle-timeout 5s"), and what it means. */
const TIMEOUT_WHAT: Record<TimeoutKind, (label: string, duration: string, agent: string) => string> = {
  turn: (label, d) => `the turn timeout (${label} ${d}) fired`,
  startup: (label, d, agent) => `the start-up timeout (${label} ${d}) fired: no JSON event from ${agent} within ${d}`,
  idle: (label, d, agent) => `the idle timeout (${label} ${d}) fired: no output from ${agent} for ${d}`,
};

/** What a crossed budget used; a step that was started but cut short is not called "used". */
const BUDGET_USED: Record<BudgetLimit, (used: number, agent: string) => string> = {
  steps: (used, agent) => `${agent} started step ${used}`,
  tokens: (used) => `the turn used ${used}`,
  cost_usd: (used) => `the turn used ${used}`,
};

const NOT_STARTED: Record<WholeLimit["scope"], string> = { batch: "task", conversation: "turn" };

/** Why a turn never started: the stop of its batch, in the words of that stop. */
function notRunDetail(stop: StopReason, scope: WholeLimit["scope"]): ErrorDetail {
  const why =
    stop.kind === "budget"
      ? `the ${scope} budget (${stop.whole?.option} ${stop.max}) was crossed`
      : stop.kind === "timeout"
        ? `the ${scope}'s timeout (${stop.whole?.option}) fired`
        : `the ${scope} was stopped (${"signal" in stop ? stop.signal : stop.kind})`;
  return detail("NotRun", `${why} before this ${NOT_STARTED[scope]} started`);
}

/** Each check returns an outcome when its class applies; they run in precedence order. */
type Check = (facts: TurnFacts, end: TurnEnd, rules: OutcomeRules) => ErrorDetail | null | undefined;

/** The stops of a batch or conversation reach the turns it never started as NotRun, with the stop's class. */
const stopCheck =
  (kind: StopReason["kind"], check: Check): Check =>
  (facts, end, rules) =>
    end.stop?.kind !== kind
      ? undefined
      : end.notRun
        ? notRunDetail(end.stop, end.notRun.scope)
        : check(facts, end, rules);

const CHECKS: Record<OutcomeClass, Check> = {
  internal_error: (_f, end) =>
    end.internalError ? detail("InternalError", bugMessage(end.internalError.message)) : undefined,
  interrupted: stopCheck("interrupted", (_f, end) =>
    end.stop?.kind === "interrupted"
      ? detail("Interrupted", `oc-exec received ${end.stop.signal} and stopped the turn`)
      : undefined,
  ),
  terminated: stopCheck("terminated", (_f, end) =>
    end.stop?.kind === "terminated"
      ? detail("Terminated", `oc-exec received ${end.stop.signal} and stopped the turn`)
      : undefined,
  ),
  timeout: stopCheck("timeout", (_f, end, { agent }) =>
    end.stop?.kind === "timeout"
      ? detail(
          "TimeoutError",
          end.stop.whole
            ? `the ${end.stop.whole.scope}'s timeout (${end.stop.whole.option}) of ${formatDuration(end.stop.ms, "exact")} fired; oc-exec stopped the turn`
            : `${TIMEOUT_WHAT[end.stop.timeout](end.stop.option ?? TIMEOUT_OPTION[end.stop.timeout], formatDuration(end.stop.ms, "exact"), agent)}; oc-exec stopped the turn`,
          {
            timeout: { kind: end.stop.timeout, ms: end.stop.ms },
          },
        )
      : undefined,
  ),
  budget_exceeded: stopCheck("budget", (_f, end, { agent }) => {
    if (end.stop?.kind !== "budget") return undefined;
    const { limit, max, used, whole, option } = end.stop;
    return detail(
      "BudgetExceeded",
      whole
        ? `the ${whole.scope}'s ${whole.option} ${max} was crossed: the ${whole.scope} used ${used}; oc-exec stopped this turn`
        : `${option ?? BUDGET_OPTION[limit]} ${max} was crossed: ${BUDGET_USED[limit](used, agent)}; oc-exec stopped it`,
      {
        budget: { limit, max, used },
      },
    );
  }),
  config_error: (facts, end) => {
    if (end.launchError) return detail(end.launchError.name, end.launchError.message);
    if (end.refusedWrite) return detail(end.refusedWrite.name, end.refusedWrite.message);
    const unrunnable = end.verification?.unrunnable;
    if (unrunnable)
      return detail(
        "VerifyCommandError",
        `the shell could not run ${unrunnable.option} ${JSON.stringify(unrunnable.command)} (exit ${unrunnable.exitCode}: ${unrunnable.exitCode === 127 ? "command not found" : "not executable"})${tailOf(unrunnable.output)}`,
      );
    const upstream = facts.errors.find((e) => e.class === "config_error");
    if (upstream) return fromUpstream(upstream);
    if (facts.sessionMismatch) {
      const { requested, reported } = facts.sessionMismatch;
      return detail("SessionMismatch", `asked to resume session ${requested}, but opencode ran session ${reported}`);
    }
    // bubblewrap refused at run time what its probe was granted (a namespace, a mount): opencode
    // never started, and the sandbox is what failed, as when the probe itself is refused.
    const bwrap = facts.events === 0 ? facts.stderrTail.find((line) => line.startsWith("bwrap: ")) : undefined;
    if (bwrap && end.process?.exitCode !== 0)
      return detail(
        "SandboxUnavailable",
        `the sandbox could not start opencode (${bwrap}): the kernel refused bubblewrap what it needs; \`oc-exec doctor\` says what to enable`,
      );
    if (facts.stderrConfigError && facts.events === 0) {
      // opencode explains over several lines ("Error: Configuration is invalid ...", "↳ Expected ...").
      const lines = facts.stderrErrors.length > 0 ? facts.stderrErrors : facts.stderrConfigLines;
      const message = lines.join("\n").replace(/^Error:\s*/, "");
      return detail("OpencodeConfigError", `opencode refused to start: ${message}`);
    }
    return undefined;
  },
  api_error: (facts, end) => {
    if (end.stop?.kind === "retry_wait") {
      const { cause, waitMs, limit } = end.stop;
      return detail(
        "APIError",
        `opencode was waiting to retry a failed model call (${cause})${waitMs !== null ? ` for ${formatDuration(waitMs)}` : ""}, longer than ${limit} allows; oc-exec stopped the turn instead of sleeping through it`,
        { retryable: true },
      );
    }
    const e = facts.errors.find((x) => x.class === "api_error");
    return e ? fromUpstream(e) : undefined;
  },
  context_overflow: (facts) => {
    const e = facts.errors.find((x) => x.class === "context_overflow");
    return e ? fromUpstream(e) : undefined;
  },
  approval_denied: (facts, _end, { advice, agent }) => {
    const d = facts.permissionDenials[0];
    if (!d) {
      // 2.x can report a blocked permission as a session error of its own.
      const rejected = facts.errors.find((x) => x.class === "approval_denied");
      return rejected ? fromUpstream(rejected) : undefined;
    }
    const what = d.permission ?? d.tool;
    const subject = what ? `permission ${what}` : "a permission";
    const pattern = d.pattern ? ` (${d.pattern})` : "";
    const more = facts.permissionDenials.length > 1 ? ` and ${facts.permissionDenials.length - 1} more` : "";
    if (d.permission === "question" && d.tool === "question" && d.pattern !== null) {
      return detail(
        "QuestionRejected",
        `the agent asked "${d.pattern}"${more}, and nobody can answer in a headless run; oc-exec rejected it. Answer it in the prompt, or leave the question tool denied (oc-exec's default on a server).`,
      );
    }
    if (facts.policyDenied.has(d)) {
      return detail(
        "PermissionDenied",
        `the permission policy refused ${subject}${pattern}${more}: no rule allows it (--allow/--deny, or opencode's permission config). Allow it there to let the agent use it.`,
      );
    }
    return detail(
      "PermissionDenied",
      `${agent} needed ${subject}${pattern}${more}, and nobody can approve it in a headless run. Allow it with ${advice.allow}${what ? ` ${what}${d.pattern ? ` (or ${advice.allow} '${what}:${d.pattern}')` : ""}` : ""} together with every other key the task needs (${advice.allow} denies each key it does not name), or approve whatever is asked with ${advice.auto}.`,
    );
  },
  agent_error: (facts, end, { agent }) => {
    // The server went away: whatever opencode said before, the turn did not end on its own.
    if (end.lost) return detail(end.lost.name, end.lost.message);
    const e = facts.errors[0];
    if (e) return fromUpstream(e);
    if (end.outputError) return detail("StructuredOutputError", end.outputError);
    const failed = end.verification?.failed;
    if (failed)
      return detail(
        "VerificationFailed",
        `${failed.option} ${JSON.stringify(failed.command)} still fails (${failed.exitCode === null ? "stopped" : `exit ${failed.exitCode}`}) after ${failed.rounds === 1 ? "the turn" : `${failed.rounds - 1} repair${failed.rounds === 2 ? "" : "s"} by the agent`}${tailOf(failed.output)}`,
      );
    if (facts.lastStepReason === "length")
      return detail(
        "OutputLengthError",
        'the model\'s answer was cut off: the last step finished with reason "length" (output token limit)',
      );
    // An ACP agent's own ends of a turn (hosts/acp/): it refused, or hit its own limit of requests.
    if (facts.lastStepReason === "refusal")
      return detail("AgentRefused", "the agent refused to go on with the turn (ACP stopReason refusal)");
    if (facts.lastStepReason === "max-turn-requests")
      return detail(
        "AgentTurnLimit",
        "the agent stopped at its own limit of model requests for a turn (ACP stopReason max_turn_requests)",
      );
    const p = end.process;
    // Before opencode's fix for #50062, a turn that recovered from an error still exited 1.
    const explained = facts.recoveredErrors.length > 0 && facts.cutOff === null && p?.exitCode === 1;
    if (p && (p.signal !== null || p.exitCode !== 0) && !explained) {
      return detail("OpencodeFailed", `${describeExit(p, agent)}${whatItPrinted(facts, "with")}${stderrSuffix(facts)}`);
    }
    if (facts.events === 0) {
      return detail("NoOutput", `${describeExit(p, agent)} but${whatItPrinted(facts, "but")}${stderrSuffix(facts)}`);
    }
    if (facts.cutOff) {
      const { step, afterTools } = facts.cutOff;
      const where = afterTools
        ? `after step ${step} asked for tools, and no step followed to answer`
        : `mid-step: step ${step} started and never finished`;
      return detail("StreamEnded", `${agent}'s stream ended ${where} (${describeExit(p, agent)}, with no answer)`);
    }
    return undefined;
  },
  success: () => null,
};

export function classifyOutcome(facts: TurnFacts, end: TurnEnd, rules: OutcomeRules = API_RULES): Outcome {
  for (const cls of CLASS_PRECEDENCE) {
    const error = CHECKS[cls](facts, end, rules);
    if (error === undefined) continue;
    // A turn opencode calls a success can still fail a condition the caller named (--fail-on).
    const failed =
      cls === "success"
        ? failOnError(facts, rules.failOn.conditions, rules.failOn.option, end.workspaceChanges ?? null)
        : null;
    return failed ? { class: "agent_error", error: failed } : { class: cls, error };
  }
  return { class: "success", error: null };
}
