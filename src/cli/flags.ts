// Flags in, options out: what the command line gives, as the library's options plus the few
// settings only the CLI has (prompt sources, progress display). Defaults are not applied here:
// resolveTurnOptions owns them, so an unset flag stays undefined.

import { splitList } from "../domain/opencode/permissions.js";
import { ConfigError } from "../domain/outcome/errors.js";
import type { FailOn } from "../domain/outcome/fail-on.js";
import type { OptionLabels } from "../domain/outcome/labels.js";
import type { RunTurnOptions } from "../plan/options.js";
import { parseCount, parseDurationFlag } from "./duration.js";
import { parseMcp, readConfigFile, readOutputSchema } from "./flag-values.js";
import { type LimitFlags, limitLabels, limitOptions } from "./limit-flags.js";

/** The sandbox's, the checks' and the attempts' flags: a turn's and a batch's, worded once (program.ts). */
export type WorkFlags = {
  sandbox?: string;
  writable?: string[];
  readable?: string[];
  allowHost?: string[];
  passEnv?: string[];
  verify?: string[];
  verifyTimeout?: string;
  verifyAttempts?: string;
  retry?: string;
  retryDelay?: string;
  retryMaxDelay?: string;
  fallbackModel?: string;
};

/** Those flags as the library's options (the resolver checks what they say). */
export function workOptions(
  flags: WorkFlags,
): Pick<
  RunTurnOptions,
  | "writable"
  | "readable"
  | "allowHosts"
  | "passEnv"
  | "verify"
  | "verifyTimeoutMs"
  | "verifyAttempts"
  | "retry"
  | "retryDelayMs"
  | "retryMaxDelayMs"
  | "fallbackModel"
> {
  const duration = (v: string | undefined, flag: string) => (v === undefined ? undefined : parseDurationFlag(v, flag));
  const count = (v: string | undefined, flag: string) => (v === undefined ? undefined : parseCount(v, flag));
  return {
    writable: flags.writable,
    readable: flags.readable,
    allowHosts: flags.allowHost ? splitList(flags.allowHost) : undefined,
    passEnv: flags.passEnv ? splitList(flags.passEnv) : undefined,
    verify: flags.verify,
    verifyTimeoutMs: duration(flags.verifyTimeout, "--verify-timeout"),
    verifyAttempts: count(flags.verifyAttempts, "--verify-attempts"),
    retry: count(flags.retry, "--retry"),
    retryDelayMs: duration(flags.retryDelay, "--retry-delay"),
    retryMaxDelayMs: duration(flags.retryMaxDelay, "--retry-max-delay"),
    fallbackModel: flags.fallbackModel,
  };
}

export type RawFlags = WorkFlags &
  LimitFlags<""> &
  LimitFlags<"turn-"> & {
    model?: string;
    agent?: string;
    variant?: string;
    thinking?: boolean;
    dir?: string;
    session?: string;
    title?: string;
    file?: string[];
    pure?: boolean;
    auto?: boolean;
    fullAuto?: boolean;
    redactEnv?: string[];
    dangerouslySkipPermissions?: boolean;
    opencode?: string;
    promptFile?: string;
    continue?: boolean;
    fork?: boolean;
    allow?: string[];
    deny?: string[];
    config?: string[];
    mcp?: string[];
    outputSchema?: string;
    outputLastMessage?: string;
    outputPatch?: string;
    ephemeral?: boolean;
    export?: boolean;
    includeRaw?: boolean;
    stdinTimeout?: string;
    /** false for -n/--no-stdin (commander's negatable flag: true otherwise). */
    stdin?: boolean;
    startupTimeout?: string;
    idleTimeout?: string;
    killAfter?: string;
    maxOutputBytes?: string;
    quiet?: boolean;
    verbose?: boolean;
    timestamps?: boolean;
    color?: "auto" | "always" | "never";
    version?: boolean;
    failOn?: string[];
    rehearse?: string;
    attach?: string;
    acp?: string;
    ssh?: string;
    sshOption?: string[];
    warm?: boolean;
    junit?: string;
    textDeltas?: boolean;
    inputFormat?: "text" | "jsonl";
  };

/** How the CLI names each option in messages: the one flag-name table. */
/** --sandbox as given (the resolver checks the word), or workspace-write for --full-auto. */
function sandboxFlag(flags: RawFlags): RunTurnOptions["sandbox"] {
  if (flags.fullAuto && flags.sandbox !== undefined && flags.sandbox !== "workspace-write")
    throw new ConfigError(
      `--full-auto means --sandbox workspace-write --auto; it cannot go with --sandbox ${flags.sandbox}`,
      "UsageError",
    );
  return (flags.fullAuto ? "workspace-write" : flags.sandbox) as RunTurnOptions["sandbox"];
}

export const FLAG_LABELS: OptionLabels = {
  dir: "--dir",
  files: "--file",
  allow: "--allow",
  deny: "--deny",
  config: "--config/--mcp",
  outputSchema: "--output-schema",
  outputLastMessage: "--output-last-message",
  outputPatch: "--output-patch",
  startupTimeoutMs: "--startup-timeout",
  idleTimeoutMs: "--idle-timeout",
  killAfterMs: "--kill-after",
  maxOutputBytes: "--max-output-bytes",
  failOn: "--fail-on",
  attach: "--attach",
  textDeltas: "--text-deltas",
  pure: "--pure",
  auto: "--auto",
  model: "--model",
  sandbox: "--sandbox",
  writable: "--writable",
  readable: "--readable",
  allowHosts: "--allow-host",
  passEnv: "--pass-env",
  ssh: "--ssh",
  warm: "--warm",
  sshOptions: "--ssh-option",
  verify: "--verify",
  verifyTimeoutMs: "--verify-timeout",
  verifyAttempts: "--verify-attempts",
  retry: "--retry",
  retryDelayMs: "--retry-delay",
  retryMaxDelayMs: "--retry-max-delay",
  fallbackModel: "--fallback-model",
  rehearse: "--rehearse",
  session: "--session",
  continue: "--continue",
  fork: "--fork",
  agent: "--agent",
  acp: "--acp",
  ...limitLabels(""),
};

/** How a batch names the options of tasks whose lines do not set them: by the flag that gave the default. */
export const TASK_FLAG_LABELS: OptionLabels = { ...FLAG_LABELS, ...limitLabels("task-") };

/** The CLI's own settings: where the prompt comes from and how progress is shown. */
export type CliSettings = {
  args: string[];
  promptFile: string | null;
  /** With a prompt argument, how long piped stdin has to send its first byte. */
  stdinTimeoutMs: number;
  /** -n/--no-stdin: stdin is never read (it belongs to a loop around oc-exec). */
  noStdin: boolean;
  display: Display;
  /** --junit FILE: a JUnit XML report of the run, or null. */
  junit: string | null;
};

export type Display = {
  quiet: boolean;
  verbose: boolean;
  timestamps: boolean;
  color: "auto" | "always" | "never";
};

export const STDIN_TIMEOUT_DEFAULT = "5s";
/**
 * How long a server from `oc-exec server start` waits without a turn before it stops itself: long
 * enough for the gaps between a script's steps, short enough that a script that failed before
 * `server stop` does not leave ~600 MB of opencode running for the rest of the day.
 */
export const SERVER_IDLE_DEFAULT = "15m";

export function displayFrom(flags: RawFlags): Display {
  return {
    quiet: flags.quiet ?? false,
    verbose: flags.verbose ?? false,
    timestamps: flags.timestamps ?? false,
    color: flags.color ?? "auto",
  };
}

/** --quiet as typed, for a command line that did not parse (a usage error is quiet too). */
export function quietRequested(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === "-q" || a === "--quiet" || /^-[a-zA-Z]*q/.test(a));
}

export function optionsFromFlags(
  flags: RawFlags,
  args: string[],
): { options: Omit<RunTurnOptions, "prompt" | "env">; cli: CliSettings } {
  const duration = (v: string | undefined, flag: string) => (v === undefined ? undefined : parseDurationFlag(v, flag));
  const count = (v: string | undefined, flag: string, min = 0) =>
    v === undefined ? undefined : parseCount(v, flag, { min });
  const config = [...(flags.config ?? []).map(readConfigFile), ...(flags.mcp ?? []).map(parseMcp)];
  return {
    options: {
      opencode: flags.opencode,
      attach: flags.attach,
      acp: flags.acp,
      ssh: flags.ssh,
      warm: flags.warm,
      sshOptions: flags.sshOption,
      textDeltas: flags.textDeltas,
      dir: flags.dir,
      model: flags.model,
      agent: flags.agent,
      variant: flags.variant,
      session: flags.session,
      continue: flags.continue,
      fork: flags.fork,
      title: flags.title,
      pure: flags.pure,
      ephemeral: flags.ephemeral,
      allow: flags.allow ? splitList(flags.allow) : undefined,
      deny: flags.deny ? splitList(flags.deny) : undefined,
      auto: flags.auto || flags.dangerouslySkipPermissions || flags.fullAuto || undefined,
      sandbox: sandboxFlag(flags),
      ...workOptions(flags),
      redactEnv: flags.redactEnv ? splitList(flags.redactEnv) : undefined,
      config: config.length > 0 ? config : undefined,
      files: flags.file,
      thinking: flags.thinking,
      outputSchema: flags.outputSchema ? readOutputSchema(flags.outputSchema) : undefined,
      outputLastMessage: flags.outputLastMessage,
      outputPatch: flags.outputPatch,
      ...limitOptions(flags, ""),
      startupTimeoutMs: duration(flags.startupTimeout, "--startup-timeout"),
      idleTimeoutMs: duration(flags.idleTimeout, "--idle-timeout"),
      killAfterMs: duration(flags.killAfter, "--kill-after"),
      maxOutputBytes: count(flags.maxOutputBytes, "--max-output-bytes", 1),
      includeRaw: flags.includeRaw,
      // Typed for library callers; a word the CLI was given is checked by the resolver, naming --fail-on.
      failOn: flags.failOn ? (splitList(flags.failOn) as FailOn[]) : undefined,

      // commander sets export=false for --no-export and leaves it true otherwise: only "off" is news.
      export: flags.export === false ? false : undefined,
    },
    cli: {
      args,
      promptFile: flags.promptFile ?? null,
      stdinTimeoutMs: parseDurationFlag(flags.stdinTimeout ?? STDIN_TIMEOUT_DEFAULT, "--stdin-timeout"),
      noStdin: flags.stdin === false,
      display: displayFrom(flags),
      junit: flags.junit ?? null,
    },
  };
}
