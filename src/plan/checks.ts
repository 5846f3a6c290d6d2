// The one rule for numbers, shared by the turn's, the placement's and many turns' limits.
import { ConfigError } from "../domain/outcome/errors.js";

/**
 * The one rule for numbers, on every path (a turn, a task, a conversation, a batch), each message
 * naming the option as its caller knows it: a duration of 0 turns that limit off; a budget (steps,
 * tokens, cost) of 0 is a usage error, since "spend nothing" and "no limit" would both surprise;
 * leaving a budget out means no limit.
 */
export function checkers(label: string) {
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
