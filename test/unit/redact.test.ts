import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PATTERNS, redact, redactValue } from "../../src/domain/events/redact.js";

describe("redact", () => {
  it.each([
    [
      "Incorrect API key provided: sk-test-abcdefghijklmnopqrstuvwxyz123456",
      "Incorrect API key provided: sk-[REDACTED]",
    ],
    ["Authorization: Bearer abc.def.ghi-123456", "Authorization: [REDACTED]"],
    ['{"authorization":"Basic dXNlcjpwYXNz"}', '{"authorization":"[REDACTED]"}'],
    ["x-api-key=supersecretvalue", "x-api-key=[REDACTED]"],
    ["token ghp_abcdefghijklmnopqrstuvwxyz0123", "token [REDACTED]"],
    ["AKIAABCDEFGHIJKLMNOP in the log", "[REDACTED] in the log"],
    ["curl -H 'bearer abcdefghijklmnop'", "curl -H 'Bearer [REDACTED]'"],
    ["nothing secret here: 401 Unauthorized", "nothing secret here: 401 Unauthorized"],
    // By shape: a URL's userinfo, secret-named assignments whatever their prefix, auth.json's "key".
    ["git clone https://ci:s3cr3tPass@github.com/o/r", "git clone https://ci:[REDACTED]@github.com/o/r"],
    ["DB_PASSWORD=hunter2abc psql", "DB_PASSWORD=[REDACTED] psql"],
    ["export MY_SECRET_KEY='abcdef123'", "export MY_SECRET_KEY='[REDACTED]'"],
    ["AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", "AWS_SECRET_ACCESS_KEY=[REDACTED]"],
    ['{"token": "abcdef123456"}', '{"token": "[REDACTED]"}'],
    ['{"fake": {"type": "api", "key": "k3y-0123456789abcdef"}}', '{"fake": {"type": "api", "key": "[REDACTED]"}}'],
    ["passwd: abcdefgh", "passwd: [REDACTED]"],
    // Ordinary text stays: token counts, a plain "key", a URL with @ in its path, ssh's user.
    ['"max_tokens": 4096, input_tokens=120', '"max_tokens": 4096, input_tokens=120'],
    ["GITHUB_TOKEN=unset credentials: none", "GITHUB_TOKEN=unset credentials: none"],
    ['{"key": "username"}', '{"key": "username"}'],
    [
      "see https://example.com/a@b and ssh://git@github.com/x",
      "see https://example.com/a@b and ssh://git@github.com/x",
    ],
  ])("%s", (input, expected) => {
    expect(redact(input)).toBe(expected);
  });

  it("drops response headers and redacts nested strings", () => {
    expect(
      redactValue({
        message: "key sk-abcdefghijklmn",
        responseHeaders: { "set-cookie": "x" },
        nested: [{ apiKey: "abcd1234" }],
      }),
    ).toEqual({ message: "key sk-[REDACTED]", nested: [{ apiKey: "abcd1234" }] });
  });

  it("the quick pre-check never lets through what the patterns would redact", () => {
    const everyPattern = (text: string) =>
      PATTERNS.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text);
    const pieces = [
      "Authorization: ",
      "authorization=",
      "Bearer ",
      "bearer ",
      "api_key=",
      "API-KEY: ",
      "apiKey:",
      "x-api-key=",
      "access_token=",
      "AUTH-TOKEN:",
      "secret=",
      "Password: ",
      "DB_PASSWORD=",
      "passwd=",
      "credentials: ",
      "GITHUB_TOKEN=",
      "SECRET_ACCESS_KEY=",
      '"key": "',
      "https://",
      "user:",
      "@",
      "/",
      "0123456789",
      "sk-",
      "ghp_",
      "GHO_",
      "github_pat_",
      "xoxb-",
      "AKIA",
      "AIza",
      "abcdefghijklmnop",
      "0123456789ABCDEF",
      "'",
      '"',
      " ",
      ":",
      "=",
      "-",
      "_",
      "é",
    ];
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 6 })), { maxLength: 12 }),
        (parts) => {
          const text = parts.join("");
          expect(redact(text)).toBe(everyPattern(text));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
