import { describe, expect, it } from "vitest";
import { parseAmount, parseCount, parseDurationFlag as parseDuration } from "../../src/cli/duration.js";

describe("parseDuration", () => {
  it.each([
    ["1500ms", 1500],
    ["90s", 90_000],
    ["5m", 300_000],
    ["1h", 3_600_000],
    ["2", 2000],
    ["0.5s", 500],
    ["0", 0],
  ])("%s = %d ms", (text, ms) => expect(parseDuration(text, "--timeout")).toBe(ms));

  it.each(["", "5 minutes", "-1s", "1d", "abc"])("rejects %j with a usage error naming the flag", (text) => {
    expect(() => parseDuration(text, "--timeout")).toThrowError(/--timeout takes a duration/);
  });

  it("counts and amounts", () => {
    expect(parseCount("12", "--max-steps")).toBe(12);
    expect(() => parseCount("1.5", "--max-steps")).toThrowError(/--max-steps takes a whole number/);
    expect(parseAmount("0.25", "--max-cost-usd")).toBe(0.25);
    expect(() => parseAmount("-1", "--max-cost-usd")).toThrowError(/non-negative/);
  });
});
