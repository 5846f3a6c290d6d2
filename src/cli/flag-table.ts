// The option flags, one table: each flag with the library option it sets and the parser of its
// value. commander's fields for them (RawFlags, BatchFlags, ServerFlags), their conversion into
// options (the turn, a batch's defaults, `server start`'s sandbox) and the names messages give the
// options (FLAG_LABELS) all read it; test/unit/flag-table.test.ts holds it to commander's program.
// The limits, which have a flag per scope (--max-steps, --turn-max-steps, --task-max-steps), are in
// limit-flags.ts; a task line's fields are the tasks file's (app/batch/).
import { splitList } from "../domain/opencode/permissions.js";
import type { FailOn } from "../domain/outcome/fail-on.js";
import type { OptionLabels } from "../domain/outcome/labels.js";
import type { RunTurnOptions } from "../plan/options.js";
import { parseCount, parseDurationFlag } from "./duration.js";
import { readOutputSchema } from "./flag-values.js";
import { limitLabels } from "./limit-flags.js";

type Entry<O extends keyof RunTurnOptions, I> = {
  flag: string;
  option: O;
  /** The value commander gives (a string, the repeated values, true) as the option; a bad one names the flag. */
  value: (given: I, flag: string) => RunTurnOptions[O];
};

const entry = <O extends keyof RunTurnOptions, I>(
  flag: string,
  option: O,
  value: (given: I, flag: string) => RunTurnOptions[O],
): Entry<O, I> => ({ flag, option, value });

const text = (given: string) => given;
const repeated = (given: string[]) => given;
/** Repeated, and each comma-separated: --allow read,grep --allow bash. */
const list = (given: string[]) => splitList(given);
const on = (given: boolean) => given;
const duration = (given: string, flag: string) => parseDurationFlag(given, flag);
const count = (given: string, flag: string) => parseCount(given, flag);

/** commander's field → the flag, the option it sets, the parser. */
export const OPTION_FLAGS = {
  opencode: entry("--opencode", "opencode", text),
  attach: entry("--attach", "attach", text),
  acp: entry("--acp", "acp", text),
  ssh: entry("--ssh", "ssh", text),
  sshOption: entry("--ssh-option", "sshOptions", repeated),
  warm: entry("--warm", "warm", on),
  textDeltas: entry("--text-deltas", "textDeltas", on),
  dir: entry("--dir", "dir", text),
  model: entry("--model", "model", text),
  agent: entry("--agent", "agent", text),
  variant: entry("--variant", "variant", text),
  session: entry("--session", "session", text),
  continue: entry("--continue", "continue", on),
  fork: entry("--fork", "fork", on),
  title: entry("--title", "title", text),
  pure: entry("--pure", "pure", on),
  ephemeral: entry("--ephemeral", "ephemeral", on),
  allow: entry("--allow", "allow", list),
  deny: entry("--deny", "deny", list),
  redactEnv: entry("--redact-env", "redactEnv", list),
  file: entry("--file", "files", repeated),
  thinking: entry("--thinking", "thinking", on),
  outputSchema: entry("--output-schema", "outputSchema", (given: string) => readOutputSchema(given)),
  outputLastMessage: entry("--output-last-message", "outputLastMessage", text),
  outputPatch: entry("--output-patch", "outputPatch", text),
  startupTimeout: entry("--startup-timeout", "startupTimeoutMs", duration),
  idleTimeout: entry("--idle-timeout", "idleTimeoutMs", duration),
  killAfter: entry("--kill-after", "killAfterMs", duration),
  maxOutputBytes: entry("--max-output-bytes", "maxOutputBytes", (given: string, flag) =>
    parseCount(given, flag, { min: 1 }),
  ),
  includeRaw: entry("--include-raw", "includeRaw", on),
  // Typed for library callers; a word the CLI was given is checked by the resolver, naming --fail-on.
  failOn: entry("--fail-on", "failOn", (given: string[]) => splitList(given) as FailOn[]),
  writable: entry("--writable", "writable", repeated),
  readable: entry("--readable", "readable", repeated),
  allowHost: entry("--allow-host", "allowHosts", list),
  passEnv: entry("--pass-env", "passEnv", list),
  verify: entry("--verify", "verify", repeated),
  verifyTimeout: entry("--verify-timeout", "verifyTimeoutMs", duration),
  verifyAttempts: entry("--verify-attempts", "verifyAttempts", count),
  retry: entry("--retry", "retry", count),
  retryDelay: entry("--retry-delay", "retryDelayMs", duration),
  retryMaxDelay: entry("--retry-max-delay", "retryMaxDelayMs", duration),
  fallbackModel: entry("--fallback-model", "fallbackModel", text),
} as const;

export type OptionFlag = keyof typeof OPTION_FLAGS;

/** commander's fields for the table's flags, as typed: `{ dir?: string; allow?: string[]; pure?: boolean; ... }`. */
export type TableFlags<K extends OptionFlag = OptionFlag> = {
  [F in K]?: Parameters<(typeof OPTION_FLAGS)[F]["value"]>[0];
};

/** The table's options among `keys` that the flags give, each parsed (a bad value is a usage error naming its flag). */
export function tableOptions<K extends OptionFlag>(
  flags: TableFlags<K>,
  keys: readonly K[],
): Pick<RunTurnOptions, (typeof OPTION_FLAGS)[K]["option"]> {
  const options: Record<string, unknown> = {};
  for (const key of keys) {
    const given = flags[key];
    if (given === undefined) continue;
    const { flag, option, value } = OPTION_FLAGS[key] as Entry<keyof RunTurnOptions, unknown>;
    options[option] = value(given, flag);
  }
  return options as Pick<RunTurnOptions, (typeof OPTION_FLAGS)[K]["option"]>;
}

export const ALL_OPTION_FLAGS = Object.keys(OPTION_FLAGS) as OptionFlag[];

/** The sandbox's, the checks' and the attempts' flags: a turn's, a batch's and (the sandbox's) a server's. */
export const SANDBOX_FLAGS = ["writable", "readable", "allowHost", "passEnv"] as const satisfies OptionFlag[];
export const WORK_FLAGS = [
  ...SANDBOX_FLAGS,
  "verify",
  "verifyTimeout",
  "verifyAttempts",
  "retry",
  "retryDelay",
  "retryMaxDelay",
  "fallbackModel",
] as const satisfies OptionFlag[];

/**
 * How the CLI names each option in messages: the table's flags, the limits', and the options set
 * another way (--config and --mcp merge into one; --full-auto implies --sandbox and --auto).
 */
export const FLAG_LABELS = {
  ...Object.fromEntries(Object.values(OPTION_FLAGS).map(({ flag, option }) => [option, flag])),
  config: "--config/--mcp",
  sandbox: "--sandbox",
  auto: "--auto",
  rehearse: "--rehearse",
  ...limitLabels(""),
} as OptionLabels;
