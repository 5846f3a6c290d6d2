// Lenient parsing of one line of `opencode run --format json` stdout. opencode's output has no
// schema and drifts between releases, so nothing here throws: a line is JSON-object event,
// something else, or blank, and field access goes through the small readers below.
export type Json = Record<string, unknown>;

export type UpstreamLine =
  | { kind: "blank" }
  | { kind: "text"; text: string }
  | { kind: "json-other"; text: string }
  | { kind: "event"; type: string; sessionId: string | null; event: Json };

export function parseUpstreamLine(text: string): UpstreamLine {
  const trimmed = text.trim();
  if (trimmed === "") return { kind: "blank" };
  // Only text that could be JSON pays for a parse attempt.
  if (!/^[{["\-0-9tfn]/.test(trimmed)) return { kind: "text", text };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return { kind: "text", text };
  }
  if (!isObject(value)) return { kind: "json-other", text };
  const type = typeof value.type === "string" ? value.type : "";
  return {
    kind: "event",
    type,
    sessionId: readString(value, "sessionID") ?? readString(value, "sessionId"),
    event: value,
  };
}

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function readObject(value: unknown, key: string): Json | null {
  if (!isObject(value)) return null;
  const v = value[key];
  return isObject(v) ? v : null;
}

export function readString(value: unknown, key: string): string | null {
  if (!isObject(value)) return null;
  const v = value[key];
  return typeof v === "string" ? v : null;
}

export function readNumber(value: unknown, key: string): number | null {
  if (!isObject(value)) return null;
  const v = value[key];
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

export function readBoolean(value: unknown, key: string): boolean | null {
  if (!isObject(value)) return null;
  const v = value[key];
  return typeof v === "boolean" ? v : null;
}

/** Above this a token count or a cost is not a measurement but garbage; it counts as missing. */
const IMPLAUSIBLE = 1e12;

/** A non-negative integer token count, whatever opencode sent (strings, floats, negatives, null). */
export function readCount(value: unknown, key: string): number {
  const n = readNumber(value, key);
  return n === null || n < 0 || n > IMPLAUSIBLE ? 0 : Math.round(n);
}

/** A non-negative cost in dollars, 0 when missing or implausible. */
export function readCost(value: unknown, key: string): number {
  const n = readNumber(value, key);
  return n === null || n < 0 || n > IMPLAUSIBLE ? 0 : n;
}
