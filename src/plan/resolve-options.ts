// The one place options are resolved: defaults applied, paths made absolute, the environment read,
// numbers checked. Everything downstream reads only the plan this returns: where the turn runs
// (placement.ts), its session, and the turn itself.
import { resolve } from "node:path";
import type { Clock } from "../domain/events/emitter.js";
import { makeRedactor, type Redactor, secretValues } from "../domain/events/secrets.js";
import type { BudgetLimit, Budgets } from "../domain/outcome/budget.js";
import type { OutcomeRules, StopReason } from "../domain/outcome/classify.js";
import { ConfigError } from "../domain/outcome/errors.js";
import { FAIL_ON_CONDITIONS, type FailOn, isFailOn } from "../domain/outcome/fail-on.js";
import { API_LABELS, type OptionLabels, type OptionName } from "../domain/outcome/labels.js";
import type { Limit } from "../kernel/duration.js";
import { readEnvironment } from "../kernel/environment.js";
import type { Warning } from "../kernel/problem.js";
import { checkers } from "./checks.js";
import { DEFAULTS, type RunTurnOptions } from "./options.js";
import { type Placement, resolvePlacement } from "./placement.js";

/** Reads the prompt once run.started is out (the CLI may wait on stdin); internal, not public. */
export type PromptReader = () => Promise<{ text: string; warnings: Warning[] }>;

/** The session a turn runs in: continued, forked, titled, kept or deleted after. */
export type SessionPlan = {
  /** The session to continue (-s), or null. */
  id: string | null;
  continue: boolean;
  fork: boolean;
  title: string | null;
  ephemeral: boolean;
  /** What the caller calls the session options, for a host's refusal. */
  names: Pick<OptionLabels, "session" | "continue" | "fork">;
};

/** A value the turn's messages name, with the name the caller gave its option (--verify, verify). */
export type Named<T> = T & { option: string };

/** --verify: the checks after a successful turn, each limited to timeout (null = none), and the rounds. */
export type VerifyPlan = Named<{ commands: string[]; timeout: Limit | null; attempts: number }>;

/**
 * The plan, split by lifetime: where the turn runs (the placement: one per run, what a host is made
 * from), the session it runs in, and the turn's own settings. Each stage reads it; none rewrites it
 * (another attempt or a repair is a new plan: inSession, the attempt's model).
 */
export type ResolvedTurn = {
  placement: Placement;
  session: SessionPlan;
  turn: TurnSettings;
};

/** The turn's own settings: what it asks, how it is limited and judged, and what it writes. */
export type TurnSettings = {
  prompt: PromptReader;
  model: string | null;
  agent: Named<{ name: string }> | null;
  variant: string | null;
  allow: string[];
  deny: string[];
  auto: boolean;
  /** Replaces the environment's secrets and known token shapes in everything the turn writes. */
  redactor: Redactor;
  /** Files attached to the prompt (over ssh, paths on the host). */
  files: Named<{ paths: string[] }>;
  thinking: boolean;
  textDeltas: boolean;
  outputSchema: Named<{ schema: object }> | null;
  outputLastMessage: Named<{ path: string }> | null;
  /** --output-patch: the file, and the files oc-exec writes that never go into the patch (itself, -o, --junit). */
  outputPatch: Named<{ path: string; exclude: string[] }> | null;
  /**
   * The files oc-exec itself writes (-o, --output-patch, --junit, stdout's file when it is one),
   * absolute: never the agent's work, in the patch or in result.workspace_changes.
   */
  ownOutputs: string[];
  /** The turn's time limits, each with the option that set it; null = off. */
  timeout: Limit | null;
  idleTimeout: Limit | null;
  killAfterMs: number;
  /** The turn's budgets (steps, tokens, cost), each named as its caller names it. */
  budgets: Budgets;
  maxOutputBytes: number;
  maxLineBytes: number;
  includeRaw: boolean;
  /** How the outcome is judged beyond opencode's own end (--fail-on), and the names its advice uses. */
  rules: OutcomeRules;
  verify: VerifyPlan | null;
  /** More attempts after a transient failure (0 = none), the waits between them, and the fallback model. */
  retry: number;
  retryDelayMs: number;
  retryMaxDelay: Limit;
  fallbackModel: string | null;
  /** Run `opencode export` after the turn: true, false, or null = only when nothing else named the model. */
  export: boolean | null;
  signal: AbortSignal | null;
  onStderrLine: ((line: string) => void) | null;
  onToolStarted: ((tool: string, callId: string | null) => void) | null;
  clock: Clock;
};

/**
 * The same turn continued in a session it already has (another attempt, a --verify repair): that
 * session, not the one the caller named, never forked again, and with no new title.
 */
export function inSession(turn: ResolvedTurn, sessionId: string): ResolvedTurn {
  return { ...turn, session: { ...turn.session, id: sessionId, continue: false, fork: false, title: null } };
}

/** The same turn on another model (an attempt after a transient failure, on the fallback model). */
export function withModel(plan: ResolvedTurn, model: string | null): ResolvedTurn {
  return { ...plan, turn: { ...plan.turn, model } };
}

/** The stop when the turn's --timeout fires, named as the caller set it. */
export function turnTimedOut(timeout: Limit | null): StopReason {
  return { kind: "timeout", timeout: "turn", ms: timeout?.ms ?? 0, ...(timeout ? { option: timeout.option } : {}) };
}

/** What only oc-exec's own callers (the CLI, tests) pass: never part of the public options. */
export type Internals = {
  prompt?: PromptReader;
  labels?: OptionLabels;
  clock?: Clock;
  maxLineBytes?: number;
  /** Files the caller writes after the turn (the CLI's --junit): never part of an output patch. */
  ownFiles?: string[];
};

function failOnFrom(names: string[], labels: OptionLabels): OutcomeRules["failOn"] {
  const unknown = names.filter((n) => !isFailOn(n));
  if (unknown.length > 0) {
    throw new ConfigError(
      `${labels.failOn} does not know ${unknown.map((n) => JSON.stringify(n)).join(", ")}; it takes ${Object.keys(FAIL_ON_CONDITIONS).join(", ")}`,
      "UsageError",
    );
  }
  return { conditions: [...new Set(names)] as FailOn[], option: labels.failOn };
}

export function resolveTurnOptions(
  options: Omit<RunTurnOptions, "prompt"> & { prompt?: string },
  internals: Internals = {},
): ResolvedTurn {
  const labels = internals.labels ?? API_LABELS;
  const env = options.env ?? process.env;
  const own = readEnvironment(env);
  const check = (name: OptionName) => checkers(labels[name]);
  const limit = (name: OptionName, ms: number): Limit | null => {
    const on = check(name).duration(ms);
    return on === null ? null : { ms: on, option: labels[name] };
  };
  const model = options.model ?? null;
  // provider/model, both parts named: opencode would start and fail seconds later ("Model not found: gpt4/.").
  if (model !== null && !/^[^/\s]+\/\S/.test(model))
    throw new ConfigError(
      `${labels.model} takes provider/model (e.g. anthropic/claude-sonnet-4-5, openai/gpt-4.1), not ${JSON.stringify(model)}`,
      "UsageError",
    );
  const prompt = options.prompt;
  // Sessions: opencode would pick one and ignore the other, or fail seconds later ("--fork requires
  // --continue or --session"); the caller learns it now, before anything runs.
  if (options.session && options.continue)
    throw new ConfigError(
      `${labels.session} and ${labels.continue} both name the session to continue: give one`,
      "UsageError",
    );
  if (options.fork && !options.session && !options.continue)
    throw new ConfigError(
      `${labels.fork} forks the session being resumed: it needs ${labels.session} ID or ${labels.continue}`,
      "UsageError",
    );
  const placement = resolvePlacement(options, labels);
  if (options.textDeltas && placement.attach === null && (!placement.warm || placement.acp !== null))
    throw new ConfigError(
      `${labels.textDeltas} needs ${labels.attach}: \`opencode run\` prints each text part only when it is complete`,
      "UsageError",
    );
  const ssh = placement.ssh;
  const ownOutputs = [options.outputPatch, options.outputLastMessage, ...(internals.ownFiles ?? [])].flatMap((p) =>
    p ? [resolve(p)] : [],
  );
  return {
    placement,
    session: {
      id: options.session ?? null,
      continue: options.continue ?? false,
      fork: options.fork ?? false,
      title: options.title ?? null,
      ephemeral: options.ephemeral ?? false,
      names: { session: labels.session, continue: labels.continue, fork: labels.fork },
    },
    turn: {
      prompt: internals.prompt ?? (async () => ({ text: prompt ?? "", warnings: [] })),
      model,
      agent: options.agent ? { name: options.agent, option: labels.agent } : null,
      variant: options.variant ?? null,
      allow: options.allow ?? [],
      deny: options.deny ?? [],
      auto: options.auto ?? false,
      redactor: makeRedactor(secretValues(env, options.redactEnv)),
      // Over ssh, files are paths on the host.
      files: { paths: (options.files ?? []).map((f) => (ssh ? f : resolve(f))), option: labels.files },
      thinking: options.thinking ?? false,
      textDeltas: options.textDeltas ?? false,
      outputSchema: options.outputSchema ? { schema: options.outputSchema, option: labels.outputSchema } : null,
      outputLastMessage: options.outputLastMessage
        ? { path: resolve(options.outputLastMessage), option: labels.outputLastMessage }
        : null,
      outputPatch: options.outputPatch
        ? { path: resolve(options.outputPatch), exclude: ownOutputs, option: labels.outputPatch }
        : null,
      ownOutputs,
      timeout: limit("timeoutMs", options.timeoutMs ?? DEFAULTS.timeoutMs),
      idleTimeout: limit(
        "idleTimeoutMs",
        options.idleTimeoutMs ?? ((options.retry ?? 0) > 0 ? DEFAULTS.retryIdleTimeoutMs : DEFAULTS.idleTimeoutMs),
      ),
      killAfterMs: check("killAfterMs").number(options.killAfterMs ?? DEFAULTS.killAfterMs),
      budgets: {
        limits: {
          steps: check("maxSteps").budget(options.maxSteps),
          tokens: check("maxTokens").budget(options.maxTokens),
          cost_usd: check("maxCostUsd").budget(options.maxCostUsd, { whole: false }),
        },
        names: { steps: labels.maxSteps, tokens: labels.maxTokens, cost_usd: labels.maxCostUsd },
      },
      maxOutputBytes: check("maxOutputBytes").positive(options.maxOutputBytes ?? DEFAULTS.maxOutputBytes),
      maxLineBytes: internals.maxLineBytes ?? DEFAULTS.maxLineBytes,
      includeRaw: options.includeRaw ?? false,
      rules: {
        failOn: failOnFrom(options.failOn ?? [], labels),
        advice: { allow: labels.allow, auto: labels.auto },
        agent: placement.acp?.name ?? "opencode",
      },
      verify: resolveVerify(options, labels, check),
      ...resolveRetry(options, labels, check),
      // opencode's JSON never names the model. Its log does (1.18); `opencode export` does too, at the
      // cost of another opencode start, so by default only when neither the caller nor the log named
      // it. OC_EXEC_EXPORT=0 turns it off.
      export: options.export ?? (own.exportOff || model !== null ? false : null),
      signal: options.signal ?? null,
      onStderrLine: options.onStderrLine ?? null,
      onToolStarted: options.onToolStarted ?? null,
      clock: internals.clock ?? Date.now,
    },
  };
}

/** Attempts after transient failures; their settings without --retry or a fallback would do nothing. */
function resolveRetry(
  options: Pick<RunTurnOptions, "retry" | "retryDelayMs" | "retryMaxDelayMs" | "fallbackModel">,
  labels: OptionLabels,
  check: (name: OptionName) => ReturnType<typeof checkers>,
): Pick<TurnSettings, "retry" | "retryDelayMs" | "retryMaxDelay" | "fallbackModel"> {
  const retry = check("retry").number(options.retry ?? 0);
  const fallbackModel = options.fallbackModel ?? null;
  if (fallbackModel !== null && !/^[^/\s]+\/\S+$/.test(fallbackModel))
    throw new ConfigError(
      `${labels.fallbackModel} takes provider/model, not ${JSON.stringify(fallbackModel)}`,
      "UsageError",
    );
  if (retry === 0 && fallbackModel === null) {
    const idle =
      options.retryDelayMs !== undefined
        ? labels.retryDelayMs
        : options.retryMaxDelayMs !== undefined
          ? labels.retryMaxDelayMs
          : null;
    if (idle)
      throw new ConfigError(`${idle} needs ${labels.retry}: without another attempt it would do nothing`, "UsageError");
  }
  const retryDelayMs = check("retryDelayMs").number(options.retryDelayMs ?? DEFAULTS.retryDelayMs);
  const retryMaxDelayMs = check("retryMaxDelayMs").number(
    options.retryMaxDelayMs ?? Math.max(DEFAULTS.retryMaxDelayMs, retryDelayMs),
  );
  if (retryMaxDelayMs < retryDelayMs)
    throw new ConfigError(`${labels.retryMaxDelayMs} must be at least ${labels.retryDelayMs}`, "UsageError");
  return { retry, retryDelayMs, retryMaxDelay: { ms: retryMaxDelayMs, option: labels.retryMaxDelayMs }, fallbackModel };
}

/** The checks after the turn; their limits without a check would do nothing (the rule for every flag). */
function resolveVerify(
  options: Pick<RunTurnOptions, "verify" | "verifyTimeoutMs" | "verifyAttempts">,
  labels: OptionLabels,
  check: (name: OptionName) => ReturnType<typeof checkers>,
): VerifyPlan | null {
  const verify = options.verify ?? [];
  if (verify.some((c) => c.trim() === ""))
    throw new ConfigError(`${labels.verify} takes a shell command, not an empty string`, "UsageError");
  if (verify.length === 0) {
    const idle =
      options.verifyTimeoutMs !== undefined
        ? labels.verifyTimeoutMs
        : options.verifyAttempts !== undefined
          ? labels.verifyAttempts
          : null;
    if (idle)
      throw new ConfigError(`${idle} needs ${labels.verify}: without a check it would do nothing`, "UsageError");
  }
  const timeout = limitOf(
    check("verifyTimeoutMs").duration(options.verifyTimeoutMs ?? DEFAULTS.verifyTimeoutMs),
    labels.verifyTimeoutMs,
  );
  const attempts = check("verifyAttempts").number(options.verifyAttempts ?? DEFAULTS.verifyAttempts);
  return verify.length === 0 ? null : { commands: verify, timeout, attempts, option: labels.verify };
}

const limitOf = (ms: number | null, option: string): Limit | null => (ms === null ? null : { ms, option });

/** Limits on many turns together (a batch, a conversation); null = off. */
export type WholeLimits = {
  scope: "batch" | "conversation";
  budgets: Budgets;
  /** The whole's timeout, named as the caller names it (--timeout). */
  timeout: Limit | null;
};

/** A batch's or conversation's own limits, by the same rule as a turn's, named as the caller names them. */
export function resolveWholeLimits(
  scope: WholeLimits["scope"],
  given: { maxSteps?: number; maxTokens?: number; maxCostUsd?: number; timeoutMs?: number },
  names: Record<BudgetLimit | "timeout", string>,
): WholeLimits {
  return {
    scope,
    budgets: {
      limits: {
        steps: checkers(names.steps).budget(given.maxSteps),
        tokens: checkers(names.tokens).budget(given.maxTokens),
        cost_usd: checkers(names.cost_usd).budget(given.maxCostUsd, { whole: false }),
      },
      names: { steps: names.steps, tokens: names.tokens, cost_usd: names.cost_usd },
    },
    timeout: limitOf(checkers(names.timeout).duration(given.timeoutMs ?? 0), names.timeout),
  };
}
