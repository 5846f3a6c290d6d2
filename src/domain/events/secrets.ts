// No secret leaves in what oc-exec writes. A Redactor is made once per run from the environment:
// the values of variables whose names say they are secret (GITHUB_TOKEN, NPM_TOKEN, MY_API_KEY,
// AWS_SECRET_ACCESS_KEY, a server's password…), the values in the OTLP headers variables and of the variables the caller names, replaced
// wherever they appear, on top of the known token shapes (redact.ts). It is applied to every event
// (tool output included), the last-message file, opencode's stderr lines and the raw recordings.
import { readEnvironment } from "../../kernel/environment.js";
import { headerValues, OTLP_HEADER_VARIABLES } from "../telemetry/trace-settings.js";
import { redact } from "./redact.js";

/** What a variable's name must contain for its value to be a secret, whatever it looks like. */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|CREDENTIAL/i;
/**
 * A name with KEY is a secret's (API_KEY, SSH_KEY) or a plain setting's (LOOKUP_KEY=username,
 * PRIMARY_KEY_COLUMN=customer_id, SORT_KEY): its value is redacted when it looks like a key.
 */
const KEY_NAME = /KEY/i;
/** Shorter values would match ordinary text ("true", a port number) and say nothing secret. */
const MIN_SECRET_LENGTH = 8;
export const REDACTED = "[REDACTED]";

/**
 * Whether a KEY variable's value looks like a key rather than a word of ordinary text: not letters
 * alone (with _ - . between words, as "customer_id" or "primary-key"), not a path. Redacting
 * those turned "add a username column" into "add a [REDACTED] column" wherever they appeared.
 */
function looksLikeKey(value: string): boolean {
  if (value.length < MIN_SECRET_LENGTH) return false;
  if (/^[A-Za-z]+(?:[_.-][A-Za-z]+)*$/.test(value)) return false;
  if (/^(?:\/|~\/|\.\.?\/)[^\s]*$/.test(value)) return false;
  return true;
}

/**
 * The values to redact, longest first (so a value that contains another goes whole): secret-named
 * variables', KEY variables' that look like keys, and the named ones' (`named`: --redact-env, always);
 * none of the variables OC_EXEC_REDACT_EXEMPT names (the caller says their values are not secret).
 */
export function secretValues(env: NodeJS.ProcessEnv, named: readonly string[] = []): string[] {
  const exempt = readEnvironment(env).redactExempt;
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.length < MIN_SECRET_LENGTH) continue;
    if (named.includes(name)) values.add(value);
    else if (exempt.includes(name)) continue;
    else if (SECRET_NAME.test(name) || (KEY_NAME.test(name) && looksLikeKey(value))) values.add(value);
  }
  // A tracing backend's key travels in the OTLP headers variables, whose names say nothing secret.
  for (const name of OTLP_HEADER_VARIABLES)
    for (const value of headerValues(env[name] ?? "")) if (value.length >= MIN_SECRET_LENGTH) values.add(value);
  // A value with characters JSON escapes also appears escaped inside a raw opencode line.
  for (const value of [...values]) {
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) values.add(escaped);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/** What oc-exec fills with ids, times, counts and closed-list words: never a secret, not worth a look per event. */
const PLAIN_KEYS = new Set([
  "type",
  "seq",
  "time",
  "session_id",
  "task_id",
  "turn",
  "part_id",
  "call_id",
  "status",
  "code",
  "class",
  "exit_code",
  "usage",
  "cost_usd",
  "duration_ms",
  "tokens",
  "schema_version",
  "oc_exec_version",
  "resumed",
  "ok",
]);

export type Redactor = {
  /** A text with every secret value and known token shape replaced. */
  text(text: string): string;
  /** An event (or any JSON-like value) with every string in it redacted; drafts are fresh, so in place. */
  event<T>(value: T): T;
  /**
   * The next piece of a text written in pieces (message.delta): what can be shown now, holding back
   * an end that could be the start of a secret, so a secret split across pieces is still caught.
   */
  piece(key: string, text: string): string;
  /** What is held back for each key, released (redacted) and forgotten. */
  flush(): [string, string][];
  /** One more secret, learnt during the run (a server's password). */
  add(value: string): void;
};

export function makeRedactor(initial: readonly string[]): Redactor {
  const values = [...initial];
  const byValue = (text: string): string => {
    let out = text;
    for (const value of values) if (out.includes(value)) out = out.split(value).join(REDACTED);
    return out;
  };
  const text = (s: string) => redact(byValue(s));
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return text(value);
    if (depth > 30 || value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = walk(value[i], depth + 1);
      return value;
    }
    const record = value as Record<string, unknown>;
    for (const key in record) if (!PLAIN_KEYS.has(key)) record[key] = walk(record[key], depth + 1);
    return value;
  };
  const pending = new Map<string, string>();
  return {
    text,
    event: (value) => walk(value, 0) as typeof value,
    piece(key, piece) {
      // Whole secrets first, so what is held back never cuts through one.
      const whole = byValue((pending.get(key) ?? "") + piece);
      const keep = heldBack(whole, values);
      pending.set(key, whole.slice(whole.length - keep));
      return redact(whole.slice(0, whole.length - keep));
    },
    add(value) {
      if (value.length < MIN_SECRET_LENGTH || values.includes(value)) return;
      values.push(value);
      values.sort((a, b) => b.length - a.length);
    },
    flush() {
      if (pending.size === 0) return [];
      const out = [...pending]
        .filter(([, rest]) => rest !== "")
        .map(([key, rest]) => [key, text(rest)] as [string, string]);
      pending.clear();
      return out;
    },
  };
}

/** How many characters at the end of `text` must wait: the longest end that is the start of a secret. */
function heldBack(text: string, values: readonly string[]): number {
  let keep = 0;
  for (const value of values) {
    for (let n = Math.min(value.length - 1, text.length); n > keep; n--)
      if (value.startsWith(text.slice(text.length - n))) {
        keep = n;
        break;
      }
  }
  return keep;
}
