// Durations on the command line: 1500ms, 90s, 5m, 1h, or a bare number of seconds. 0 = off.
import { ConfigError } from "../outcome/errors.js";

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(text: string, flag: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (!m)
    throw new ConfigError(`${flag} takes a duration like 1500ms, 90s or 5m, not ${JSON.stringify(text)}`, "UsageError");
  return Math.round(Number(m[1]) * UNITS[m[2] ?? "s"]!);
}

export function parseCount(text: string, flag: string, { min = 0 } = {}): number {
  if (!/^\s*\d+\s*$/.test(text) || Number(text) < min)
    throw new ConfigError(`${flag} takes a whole number ≥ ${min}, not ${JSON.stringify(text)}`, "UsageError");
  return Number(text);
}

export function parseAmount(text: string, flag: string): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || n < 0)
    throw new ConfigError(`${flag} takes a non-negative number, not ${JSON.stringify(text)}`, "UsageError");
  return n;
}
