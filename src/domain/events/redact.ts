// Error text passes through to the user; secrets never do. Applied to every message, error
// payload and stderr tail that oc-exec writes.
export const PATTERNS: readonly [RegExp, string][] = [
  // Authorization headers and bearer tokens, whatever the quoting.
  [/(authorization["']?\s*[:=]\s*["']?)(?:bearer\s+|basic\s+)?[^\s"',}]+/gi, "$1[REDACTED]"],
  [/\bbearer\s+[A-Za-z0-9._~+/=-]{8,}/gi, "Bearer [REDACTED]"],
  // key=value style secrets, by the name's ending: api_key, apiKey, x-api-key, client_secret,
  // MY_SECRET_KEY, AWS_SECRET_ACCESS_KEY, DB_PASSWORD, passwd (not max_tokens: a name that only
  // contains the word is left alone).
  [
    /(\b[A-Za-z0-9_.-]*?(?:api[_-]?key|x-api-key|access[_-]?token|auth[_-]?token|secret(?:[_-]?(?:access[_-]?)?key)?|password|passwd)["']?\s*[:=]\s*["']?)(?!\[REDACTED)[^\s"',;}]{4,}/gi,
    "$1[REDACTED]",
  ],
  // Names that are also ordinary words (GITHUB_TOKEN=unset, "token": "none", credentials: ok):
  // only a value that looks like a secret, 8 characters or more with a digit.
  [
    /(\b[A-Za-z0-9_.-]*?(?:token|credentials?|access[_-]?key|private[_-]?key)["']?\s*[:=]\s*["']?)(?!\[REDACTED)(?=[^\s"',;}]*\d)[^\s"',;}]{8,}/gi,
    "$1[REDACTED]",
  ],
  // A bare "key" in JSON (opencode's auth.json) when its value looks like one: long, no spaces, a digit.
  [/("key"\s*:\s*")(?=[^"\s]*\d)[^"\s]{16,}(?=")/gi, "$1[REDACTED]"],
  // The password in a URL's userinfo: https://user:PASS@host.
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi, "$1[REDACTED]@"],
  // Well-known key shapes: OpenAI/Anthropic (sk-...), GitHub, Slack, AWS, Google.
  [/\bsk-[A-Za-z0-9_-]{8,}/g, "sk-[REDACTED]"],
  [/\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{16,}/g, "[REDACTED]"],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, "[REDACTED]"],
  [/\bAKIA[0-9A-Z]{16}\b/g, "[REDACTED]"],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, "[REDACTED]"],
  // A private key block (cut off or whole), and an AWS secret key in a credentials file.
  // (its body: the whole lines of base64 that follow, up to the END line when there is one).
  [
    /-----BEGIN [A-Z ]*PRIVATE KEY-----(?:\r?\n[A-Za-z0-9+/=]+(?=\r?\n|$))*(?:\r?\n-----END [A-Z ]*PRIVATE KEY-----)?/g,
    "[REDACTED PRIVATE KEY]",
  ],
  [/(aws_secret_access_key\s*[:=]\s*)\S+/gi, "$1[REDACTED]"],
];

// Every pattern above needs one of these words; most strings (tool inputs, messages) have none,
// and one test is cheaper than eight replaces on the hot path.
const ANY_TRIGGER =
  /authorization|bearer|api[_-]?key|access[_-]?key|token|secret|password|passwd|credential|"key"|:\/\/|sk-|gh[pousr]_|github_pat_|xox|akia|aiza|private key/i;

export function redact(text: string): string {
  if (!ANY_TRIGGER.test(text)) return text;
  let out = text;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** Redacts every string inside a JSON-like value, and drops response headers entirely. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redact(value);
  if (depth > 20 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (/^(response|request)?_?headers$/i.test(key)) continue;
    out[key] = redactValue(v, depth + 1);
  }
  return out;
}
