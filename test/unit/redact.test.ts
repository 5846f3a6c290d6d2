import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PATTERNS, redact, redactValue } from "../../src/events/redact.js";

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
