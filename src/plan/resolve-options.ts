// The one place options are resolved: defaults applied, paths made absolute, the environment read,
// numbers checked. Everything downstream reads only the ResolvedTurn this returns.
import { resolve } from "node:path";
import type { Clock } from "../domain/events/emitter.js";
import { makeRedactor, type Redactor, secretValues } from "../domain/events/secrets.js";
import { type ConfigContent, mergeConfigContent } from "../domain/opencode/config-content.js";
import type { BudgetLimit, Budgets } from "../domain/outcome/budget.js";
import { ConfigError } from "../domain/outcome/errors.js";
import { FAIL_ON_CONDITIONS, type FailOn, isFailOn } from "../domain/outcome/fail-on.js";
import { API_LABELS, type OptionLabels, type OptionName } from "../domain/outcome/labels.js";
import { parseDuration } from "../kernel/duration.js";
import { readEnvironment } from "../kernel/environment.js";
import type { Warning } from "../kernel/problem.js";
import { type AcpSpec, resolveAcp } from "./acp-spec.js";
import { DEFAULTS, type RunTurnOptions } from "./options.js";
import { SANDBOX_MODES, type SandboxSpec, writableProblem } from "./sandbox-spec.js";
import { destinationProblem, type SshSpec } from "./ssh-spec.js";
/** Reads the prompt once run.started is out (the CLI may wait on stdin); internal, not public. */
export type PromptReader = () => Promise<{ text: string; warnings: Warning[] }>;

export type ResolvedTurn = {
  prompt: PromptReader;
  /** An explicitly chosen binary (option or $OC_EXEC_OPENCODE), else null: bundled, then PATH. */
  opencode: string | null;
  /** The ACP agent the turn runs through (hosts/acp/), or null. */
  acp: AcpSpec | null;
  /** A running opencode server's URL: the turn runs there (hosts/server/), not through `opencode run`. */
  attach: string | null;
  env: NodeJS.ProcessEnv;
  dir: string;
  model: string | null;
  agent: string | null;
  variant: string | null;
  session: string | null;
  continue: boolean;
  fork: boolean;
  title: string | null;
  pure: boolean;
  ephemeral: boolean;
  allow: string[];
  deny: string[];
  auto: boolean;
  config: Record<string, unknown>[];
  /** OPENCODE_CONFIG_CONTENT for opencode: the inherited value with `config` merged in, once. */
  opencodeConfig: ConfigContent;
  /** The sandbox the turn runs in, or null for none. */
  sandbox: SandboxSpec | null;
  /** The host the turn runs on over ssh, or null for this machine. */
  ssh: SshSpec | null;
  /** Run on a warm server that fits (or one started for it); and how long such a server idles. */
  warm: boolean;
  warmIdleMs: number;
  /** Replaces the environment's secrets and known token shapes in everything the turn writes. */
  redactor: Redactor;
  files: string[];
  thinking: boolean;
  textDeltas: boolean;
  outputSchema: object | null;
  outputLastMessage: string | null;
  /** --output-patch: the file, and the files oc-exec writes that never go into the patch (itself, -o, --junit). */
  outputPatch: { path: string; exclude: string[] } | null;
  /**
   * The files oc-exec itself writes (-o, --output-patch, --junit, stdout's file when it is one),
   * absolute: never the agent's work, in the patch or in result.workspace_changes.
   */
  ownOutputs: string[];
  /** null = off. */
  timeoutMs: number | null;
  startupTimeoutMs: number | null;
  idleTimeoutMs: number | null;
  killAfterMs: number;
  maxSteps: number | null;
  maxTokens: number | null;
  maxCostUsd: number | null;
  maxOutputBytes: number;
  maxLineBytes: number;
  includeRaw: boolean;
  failOn: FailOn[];
  /** Checks after a successful turn (empty: none), each limited to verifyTimeoutMs (null = none). */
  verify: string[];
  verifyTimeoutMs: number | null;
  verifyAttempts: number;
  /** More attempts after a transient failure (0 = none), the waits between them, and the fallback model. */
  retry: number;
  retryDelayMs: number;
  retryMaxDelayMs: number;
  fallbackModel: string | null;
  /** Run `opencode export` after the turn: true, false, or null = only when nothing else named the model. */
  export: boolean | null;
  signal: AbortSignal | null;
  onStderrLine: ((line: string) => void) | null;
  onToolStarted: ((tool: string, callId: string | null) => void) | null;
  labels: OptionLabels;
  clock: Clock;
};

/** What only oc-exec's own callers (the CLI, tests) pass: never part of the public options. */
export type Internals = {
  prompt?: PromptReader;
  labels?: OptionLabels;
  clock?: Clock;
  maxLineBytes?: number;
  /** Files the caller writes after the turn (the CLI's --junit): never part of an output patch. */
  ownFiles?: string[];
};

function failOnFrom(names: string[], labels: OptionLabels): FailOn[] {
  const unknown = names.filter((n) => !isFailOn(n));
  if (unknown.length > 0) {
    throw new ConfigError(
      `${labels.failOn} does not know ${unknown.map((n) => JSON.stringify(n)).join(", ")}; it takes ${Object.keys(FAIL_ON_CONDITIONS).join(", ")}`,
      "UsageError",
    );
  }
  return [...new Set(names)] as FailOn[];
}

export function resolveTurnOptions(
  options: Omit<RunTurnOptions, "prompt"> & { prompt?: string },
  internals: Internals = {},
): ResolvedTurn {
  const labels = internals.labels ?? API_LABELS;
  const env = options.env ?? process.env;
  const own = readEnvironment(env);
  const check = (name: OptionName) => checkers(labels[name]);
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
  const attach = options.attach ?? null;
  const acpAsked = options.acp ?? own.acp;
  const acp = acpAsked ? resolveAcp(acpAsked, options.acp !== undefined ? labels.acp : "OC_EXEC_ACP") : null;
  if (acp) {
    // An ACP agent is started here, for this turn: a server, another host or a warm server is another way.
    const other = attach !== null ? labels.attach : options.ssh ? labels.ssh : options.warm ? labels.warm : null;
    if (other)
      throw new ConfigError(
        `${options.acp !== undefined ? labels.acp : "OC_EXEC_ACP"} runs the turn through an agent started here; it cannot go with ${other}`,
        "UsageError",
      );
  }
  // --warm finds or starts a server of its own; --attach names one: together they say two things.
  if (attach !== null && options.warm)
    throw new ConfigError(
      `${labels.warm} finds or starts a server of its own and ${labels.attach} names one: give one`,
      "UsageError",
    );
  const warm = attach === null && acp === null && (options.warm ?? own.warm);
  if (options.textDeltas && attach === null && !warm)
    throw new ConfigError(
      `${labels.textDeltas} needs ${labels.attach}: \`opencode run\` prints each text part only when it is complete`,
      "UsageError",
    );
  const ssh = resolveSsh(options, labels, own.sshConfig);
  const sandbox = resolveSandbox(ssh ? { ...options, passEnv: undefined } : options, env, labels);
  // Never a turn run unsandboxed because it went through another agent: not built yet, so refused.
  if (acp && sandbox)
    throw new ConfigError(
      `${options.acp !== undefined ? labels.acp : "OC_EXEC_ACP"} cannot be combined with a sandbox (${options.sandbox !== undefined ? labels.sandbox : "OC_EXEC_SANDBOX"}) yet: an ACP agent runs unsandboxed; nothing was run`,
      "UsageError",
    );
  // Never a turn run unsandboxed because it went to another host: the sandbox is this machine's.
  if (ssh && sandbox)
    throw new ConfigError(
      `${labels.ssh} cannot be combined with a sandbox (${options.sandbox !== undefined ? labels.sandbox : "OC_EXEC_SANDBOX"}): the sandbox runs on this machine only`,
      "UsageError",
    );
  const ownOutputs = [options.outputPatch, options.outputLastMessage, ...(internals.ownFiles ?? [])].flatMap((p) =>
    p ? [resolve(p)] : [],
  );
  return {
    prompt: internals.prompt ?? (async () => ({ text: prompt ?? "", warnings: [] })),
    // OC_EXEC_OPENCODE names a binary here: over ssh only --opencode names one there.
    opencode: options.opencode ?? (ssh ? null : own.opencode),
    attach,
    acp,
    env,
    // Over ssh, --dir names a directory on the host: ssh.dir keeps it as given.
    dir: resolve(ssh ? DEFAULTS.dir : (options.dir ?? DEFAULTS.dir)),
    model,
    agent: options.agent ?? null,
    variant: options.variant ?? null,
    session: options.session ?? null,
    continue: options.continue ?? false,
    fork: options.fork ?? false,
    title: options.title ?? null,
    pure: options.pure ?? false,
    ephemeral: options.ephemeral ?? false,
    allow: options.allow ?? [],
    deny: options.deny ?? [],
    auto: options.auto ?? false,
    config: options.config ?? [],
    opencodeConfig: mergeConfigContent(env.OPENCODE_CONFIG_CONTENT, options.config ?? [], labels.config),
    sandbox,
    ssh,
    warm,
    warmIdleMs: warmIdle(own.warmIdle),
    redactor: makeRedactor(secretValues(env, options.redactEnv)),
    // Over ssh, files are paths on the host.
    files: (options.files ?? []).map((f) => (ssh ? f : resolve(f))),
    thinking: options.thinking ?? false,
    textDeltas: options.textDeltas ?? false,
    outputSchema: options.outputSchema ?? null,
    outputLastMessage: options.outputLastMessage ? resolve(options.outputLastMessage) : null,
    outputPatch: options.outputPatch ? { path: resolve(options.outputPatch), exclude: ownOutputs } : null,
    ownOutputs,
    timeoutMs: check("timeoutMs").duration(options.timeoutMs ?? DEFAULTS.timeoutMs),
    startupTimeoutMs: check("startupTimeoutMs").duration(options.startupTimeoutMs ?? DEFAULTS.startupTimeoutMs),
    idleTimeoutMs: check("idleTimeoutMs").duration(
      options.idleTimeoutMs ?? ((options.retry ?? 0) > 0 ? DEFAULTS.retryIdleTimeoutMs : DEFAULTS.idleTimeoutMs),
    ),
    killAfterMs: check("killAfterMs").number(options.killAfterMs ?? DEFAULTS.killAfterMs),
    maxSteps: check("maxSteps").budget(options.maxSteps),
    maxTokens: check("maxTokens").budget(options.maxTokens),
    maxCostUsd: check("maxCostUsd").budget(options.maxCostUsd, { whole: false }),
    maxOutputBytes: check("maxOutputBytes").positive(options.maxOutputBytes ?? DEFAULTS.maxOutputBytes),
    maxLineBytes: internals.maxLineBytes ?? DEFAULTS.maxLineBytes,
    includeRaw: options.includeRaw ?? false,
    failOn: failOnFrom(options.failOn ?? [], labels),
    ...resolveVerify(options, labels, check),
    ...resolveRetry(options, labels, check),
    // opencode's JSON never names the model. Its log does (1.18); `opencode export` does too, at the
    // cost of another opencode start, so by default only when neither the caller nor the log named
    // it. OC_EXEC_EXPORT=0 turns it off.
    export: options.export ?? (own.exportOff || model !== null ? false : null),
    signal: options.signal ?? null,
    onStderrLine: options.onStderrLine ?? null,
    onToolStarted: options.onToolStarted ?? null,
    labels,
    clock: internals.clock ?? Date.now,
  };
}

/** HOST or HOST:PORT; an IPv6 address in brackets. */
const HOST_ENTRY = /^(\*\.)?([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/;
const ENV_NAME = /^[A-Za-z_*][A-Za-z0-9_*]*$/;

/**
 * The sandbox asked for (the option, else OC_EXEC_SANDBOX), checked: a mode it knows, hosts and
 * names it can use, and no flag that would do nothing (the rule for every flag of another mode).
 * On a server (attach), the server's sandbox is what counts: its backend checks the two agree.
 */
export function resolveSandbox(
  options: Pick<RunTurnOptions, "sandbox" | "writable" | "readable" | "allowHosts" | "passEnv">,
  env: NodeJS.ProcessEnv,
  labels: Pick<OptionLabels, "sandbox" | "writable" | "readable" | "allowHosts" | "passEnv">,
): SandboxSpec | null {
  const fromEnv = env.OC_EXEC_SANDBOX?.trim() || undefined;
  const mode = options.sandbox ?? fromEnv ?? "off";
  const named = options.sandbox !== undefined ? labels.sandbox : "OC_EXEC_SANDBOX";
  if (!(SANDBOX_MODES as readonly string[]).includes(mode))
    throw new ConfigError(`${named} takes ${SANDBOX_MODES.join(", ")}, not ${JSON.stringify(mode)}`, "UsageError");
  const writable = options.writable ?? [];
  const readable = options.readable ?? [];
  const allowHosts = options.allowHosts ?? [];
  const passEnv = options.passEnv ?? [];
  if (mode === "off") {
    const idle = (
      [
        [writable, labels.writable],
        [readable, labels.readable],
        [allowHosts, labels.allowHosts],
        [passEnv, labels.passEnv],
      ] as const
    ).find(([list]) => list.length > 0);
    if (idle)
      throw new ConfigError(`${idle[1]} needs ${labels.sandbox}: without a sandbox it would do nothing`, "UsageError");
    return null;
  }
  if (mode === "read-only" && writable.length > 0)
    throw new ConfigError(
      `${labels.writable} needs ${labels.sandbox} workspace-write: read-only writes nowhere`,
      "UsageError",
    );
  const badHost = allowHosts.find((h) => !HOST_ENTRY.test(h));
  if (badHost)
    throw new ConfigError(`${labels.allowHosts} takes HOST or HOST:PORT, not ${JSON.stringify(badHost)}`, "UsageError");
  const badName = passEnv.find((n) => !ENV_NAME.test(n));
  if (badName)
    throw new ConfigError(
      `${labels.passEnv} takes a variable name or a pattern with *, not ${JSON.stringify(badName)}`,
      "UsageError",
    );
  const paths = writable.map((p) => resolve(p));
  for (const path of paths) {
    const problem = writableProblem(path, env);
    if (problem)
      throw new ConfigError(
        `${labels.writable} ${path} would let the agent write what runs outside the sandbox later: ${problem}`,
        "UsageError",
      );
  }
  return {
    mode: mode as SandboxSpec["mode"],
    writable: paths,
    readable: readable.map((p) => resolve(p)),
    allowHosts,
    passEnv,
  };
}

/** OC_EXEC_WARM_IDLE as milliseconds (0: never idle out), or the default. */
function warmIdle(text: string | null): number {
  if (text === null) return DEFAULTS.warmIdleMs;
  const ms = parseDuration(text);
  if (ms === null)
    throw new ConfigError(
      `OC_EXEC_WARM_IDLE takes a duration like 90s or 5m, not ${JSON.stringify(text)}`,
      "UsageError",
    );
  return ms;
}

/** The host over ssh, checked: a destination ssh takes, options as KEY=VALUE, nothing it cannot carry. */
export function resolveSsh(
  options: Pick<RunTurnOptions, "ssh" | "sshOptions" | "dir" | "passEnv" | "attach">,
  labels: OptionLabels,
  configFile: string | null,
): SshSpec | null {
  const destination = options.ssh;
  if (destination === undefined) {
    if ((options.sshOptions ?? []).length > 0)
      throw new ConfigError(
        `${labels.sshOptions} needs ${labels.ssh}: without a host it would do nothing`,
        "UsageError",
      );
    return null;
  }
  const problem = destinationProblem(destination);
  if (problem)
    throw new ConfigError(
      `${labels.ssh} takes [user@]host[:port] or a Host alias of your ssh config, not ${problem}: ${JSON.stringify(destination)}`,
      "UsageError",
    );
  const badOption = (options.sshOptions ?? []).find((o) => !/^[A-Za-z][A-Za-z0-9]*=/.test(o));
  if (badOption !== undefined)
    throw new ConfigError(`${labels.sshOptions} takes KEY=VALUE, not ${JSON.stringify(badOption)}`, "UsageError");
  // A server there is `server start --ssh`'s: refused rather than attached to here by mistake.
  if (options.attach !== undefined)
    throw new ConfigError(
      `${labels.ssh} cannot be combined with ${labels.attach} (a server there: oc-exec server start --ssh)`,
      "UsageError",
    );
  return {
    destination,
    options: options.sshOptions ?? [],
    configFile: configFile === null ? null : resolve(configFile),
    dir: options.dir ?? null,
    passEnv: options.passEnv ?? [],
  };
}

/** Attempts after transient failures; their settings without --retry or a fallback would do nothing. */
function resolveRetry(
  options: Pick<RunTurnOptions, "retry" | "retryDelayMs" | "retryMaxDelayMs" | "fallbackModel">,
  labels: OptionLabels,
  check: (name: OptionName) => ReturnType<typeof checkers>,
): Pick<ResolvedTurn, "retry" | "retryDelayMs" | "retryMaxDelayMs" | "fallbackModel"> {
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
  return { retry, retryDelayMs, retryMaxDelayMs, fallbackModel };
}

/** The checks after the turn; their limits without a check would do nothing (the rule for every flag). */
function resolveVerify(
  options: Pick<RunTurnOptions, "verify" | "verifyTimeoutMs" | "verifyAttempts">,
  labels: OptionLabels,
  check: (name: OptionName) => ReturnType<typeof checkers>,
): Pick<ResolvedTurn, "verify" | "verifyTimeoutMs" | "verifyAttempts"> {
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
  return {
    verify,
    verifyTimeoutMs: check("verifyTimeoutMs").duration(options.verifyTimeoutMs ?? DEFAULTS.verifyTimeoutMs),
    verifyAttempts: check("verifyAttempts").number(options.verifyAttempts ?? DEFAULTS.verifyAttempts),
  };
}

/**
 * The one rule for numbers, on every path (a turn, a task, a conversation, a batch), each message
 * naming the option as its caller knows it: a duration of 0 turns that limit off; a budget (steps,
 * tokens, cost) of 0 is a usage error, since "spend nothing" and "no limit" would both surprise;
 * leaving a budget out means no limit.
 */
function checkers(label: string) {
  const number = (value: number, { whole = true } = {}): number => {
    if (!Number.isFinite(value) || value < 0 || (whole && !Number.isInteger(value)))
      throw new ConfigError(`${label} must be a non-negative ${whole ? "whole " : ""}number, not ${value}`);
    return value;
  };
  return {
    number,
    duration: (ms: number): number | null => number(ms) || null,
    budget: (value: number | undefined, { whole = true } = {}): number | null => {
      if (value === undefined) return null;
      if (number(value, { whole }) === 0)
        throw new ConfigError(
          `${label} must be more than 0: a budget of 0 would stop the work before it starts (leave it out for no limit)`,
          "UsageError",
        );
      return value;
    },
    positive: (value: number): number => {
      if (number(value) === 0) throw new ConfigError(`${label} must be at least 1`);
      return value;
    },
  };
}

/** Limits on many turns together (a batch, a conversation); null = off. */
export type WholeLimits = {
  scope: "batch" | "conversation";
  budgets: Budgets;
  timeoutMs: number | null;
  /** What the caller calls the whole timeout (--timeout). */
  timeoutName: string;
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
    timeoutMs: checkers(names.timeout).duration(given.timeoutMs ?? 0),
    timeoutName: names.timeout,
  };
}
