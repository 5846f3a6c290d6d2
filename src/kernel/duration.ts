// Durations, both ways: parsed from what people type (1500ms, 90s, 5m, 1h, 1m30s, or a bare number
// of seconds) and formatted back. No imports: the CLI, the classifier and the progress display all
// use it.
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
const COMPOUND = /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/;

/** Milliseconds, or null when the text is not a duration. A bare number means seconds. */
export function parseDuration(text: string): number | null {
  const t = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  const m = COMPOUND.exec(t);
  if (!m || t === "" || m.slice(1).every((part) => part === undefined)) return null;
  const [h, min, s, ms] = m.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number];
  return Math.round(h * UNIT_MS.h! + min * UNIT_MS.m! + s * UNIT_MS.s! + ms);
}

/**
 * "exact": a configured limit, as a duration the user could type back (1500ms, 90s, 5m, 1h).
 * "rounded": an elapsed time for people (850ms, 4.1s, 2m5s).
 */
export function formatDuration(ms: number, precision: "exact" | "rounded" = "rounded"): string {
  if (precision === "exact") {
    for (const unit of ["h", "m", "s"] as const)
      if (ms > 0 && ms % UNIT_MS[unit]! === 0) return `${ms / UNIT_MS[unit]!}${unit}`;
    return `${ms}ms`;
  }
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  // Whole seconds first, so 59.6 s past a minute is the next minute, never "59m60s".
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}

/** A time limit as its caller set it: the milliseconds, and the option that set them (--timeout, timeoutMs). */
export type Limit = { ms: number; option: string };
