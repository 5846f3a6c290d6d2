import { describe, expect, it } from "vitest";
import { redact, redactValue } from "../../src/outcome/redact.js";

describe("redact", () => {
  it.each([
    ["Incorrect API key provided: sk-test-abcdefghijklmnopqrstuvwxyz123456", "Incorrect API key provided: sk-[REDACTED]"],
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
      redactValue({ message: "key sk-abcdefghijklmn", responseHeaders: { "set-cookie": "x" }, nested: [{ apiKey: "abcd1234" }] }),
    ).toEqual({ message: "key sk-[REDACTED]", nested: [{ apiKey: "abcd1234" }] });
  });
});
