// Flag values: durations, counts and amounts. A value that does not parse is a usage error that
// names the flag.

import { ConfigError } from "../domain/outcome/errors.js";
import { parseDuration } from "../kernel/duration.js";

export function parseDurationFlag(text: string, flag: string): number {
  const ms = parseDuration(text);
  if (ms === null) {
    throw new ConfigError(`${flag} takes a duration like 1500ms, 90s or 5m, not ${JSON.stringify(text)}`, "UsageError");
  }
  return ms;
}

export function parseCount(text: string, flag: string, { min = 0 } = {}): number {
  if (!/^\s*\d+\s*$/.test(text) || Number(text) < min)
    throw new ConfigError(`${flag} takes a whole number ≥ ${min}, not ${JSON.stringify(text)}`, "UsageError");
  return Number(text);
}

/**
 * A budget's count (--max-steps, --max-tokens and their --turn-/--task- forms): a whole number ≥ 1.
 * 0 passes through, so the resolver can say why a budget of 0 is refused.
 */
export function parseBudgetCount(text: string, flag: string): number {
  if (!/^\s*\d+\s*$/.test(text))
    throw new ConfigError(
      `${flag} takes a whole number ≥ 1, not ${JSON.stringify(text)} (leave it out for no limit)`,
      "UsageError",
    );
  return Number(text);
}

export function parseAmount(text: string, flag: string): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || n < 0)
    throw new ConfigError(`${flag} takes a non-negative number, not ${JSON.stringify(text)}`, "UsageError");
  return n;
}
