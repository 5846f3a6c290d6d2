// The limit flags, one table: each option a turn's limits set, its parser, and its flag in each
// scope: a single turn's own (--max-steps), each turn of a conversation (--turn-max-steps), each
// task of a batch (--task-max-steps). The flags' fields (RawFlags, BatchFlags), their parsing, the
// names messages give them (FLAG_LABELS in flag-table.ts, TASK_FLAG_LABELS) and the "does nothing here" rule all
// read it. (A task line's own fields, max_steps and timeout, are the tasks file's: app/batch/.)
import type { OptionLabels } from "../domain/outcome/labels.js";
import type { RunTurnOptions } from "../plan/options.js";
import { parseAmount, parseBudgetCount, parseDurationFlag } from "./duration.js";

export const LIMIT_FLAGS = {
  maxSteps: { flag: "max-steps", parse: parseBudgetCount, keys: ["maxSteps", "turnMaxSteps", "taskMaxSteps"] },
  maxTokens: { flag: "max-tokens", parse: parseBudgetCount, keys: ["maxTokens", "turnMaxTokens", "taskMaxTokens"] },
  maxCostUsd: { flag: "max-cost-usd", parse: parseAmount, keys: ["maxCostUsd", "turnMaxCostUsd", "taskMaxCostUsd"] },
  timeoutMs: { flag: "timeout", parse: parseDurationFlag, keys: ["timeout", "turnTimeout", "taskTimeout"] },
} as const;

export type LimitOption = keyof typeof LIMIT_FLAGS;
/** "": the turn's own flags; "turn-": a conversation's each turn; "task-": a batch's each task. */
export type LimitScope = "" | "turn-" | "task-";
const SCOPE_INDEX = { "": 0, "turn-": 1, "task-": 2 } as const;
type KeyIn<S extends LimitScope> = (typeof LIMIT_FLAGS)[LimitOption]["keys"][(typeof SCOPE_INDEX)[S]];

/** commander's fields for the limit flags of a scope, as typed: `{ turnMaxSteps?: string; ... }`. */
export type LimitFlags<S extends LimitScope> = { [K in KeyIn<S>]?: string };

const OPTIONS = Object.keys(LIMIT_FLAGS) as LimitOption[];

/** The flag that sets `option` in `scope`: --turn-max-steps. */
const flagOf = (option: LimitOption, scope: LimitScope) => `--${scope}${LIMIT_FLAGS[option].flag}`;
const keyOf = (option: LimitOption, scope: LimitScope): string => LIMIT_FLAGS[option].keys[SCOPE_INDEX[scope]];

/** The scope's flags as the library's options, each parsed, a bad value named by its flag. */
export function limitOptions<S extends LimitScope>(flags: LimitFlags<S>, scope: S): Pick<RunTurnOptions, LimitOption> {
  const options: Pick<RunTurnOptions, LimitOption> = {};
  for (const option of OPTIONS) {
    const value = (flags as Record<string, string | undefined>)[keyOf(option, scope)];
    if (value !== undefined) options[option] = LIMIT_FLAGS[option].parse(value, flagOf(option, scope));
  }
  return options;
}

/** How messages name the scope's limits: --task-timeout. */
export function limitLabels(scope: LimitScope): Pick<OptionLabels, LimitOption> {
  return Object.fromEntries(OPTIONS.map((o) => [o, flagOf(o, scope)])) as Pick<OptionLabels, LimitOption>;
}

/** The scope's limit flags that were given, as typed (for the rule against a flag that does nothing). */
export function givenLimitFlags<S extends LimitScope>(flags: LimitFlags<S>, scope: S): string[] {
  return OPTIONS.filter((o) => (flags as Record<string, unknown>)[keyOf(o, scope)] !== undefined).map((o) =>
    flagOf(o, scope),
  );
}
