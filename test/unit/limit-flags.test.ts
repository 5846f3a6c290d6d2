// The limit flags' one table: the same option under its three flags, parsed and named by the flag
// given, and every flag it names one commander really has.
import { describe, expect, it } from "vitest";
import { givenLimitFlags, LIMIT_FLAGS, limitLabels, limitOptions } from "../../src/cli/limit-flags.js";
import { buildProgram } from "../../src/cli/program.js";

const quiet = { writeOut: () => {}, writeErr: () => {} };

describe("the limit flags' table", () => {
  it("names each limit by its flag in each scope", () => {
    expect(limitLabels("")).toEqual({
      maxSteps: "--max-steps",
      maxTokens: "--max-tokens",
      maxCostUsd: "--max-cost-usd",
      timeoutMs: "--timeout",
    });
    expect(limitLabels("task-").timeoutMs).toBe("--task-timeout");
    expect(limitLabels("turn-").maxCostUsd).toBe("--turn-max-cost-usd");
  });

  it("parses each scope's fields, and a bad value is a usage error naming the flag as typed", () => {
    expect(limitOptions({ turnMaxSteps: "3", turnTimeout: "90s" }, "turn-")).toEqual({
      maxSteps: 3,
      timeoutMs: 90_000,
    });
    expect(limitOptions({ taskMaxCostUsd: "0.5" }, "task-")).toEqual({ maxCostUsd: 0.5 });
    expect(limitOptions({}, "")).toEqual({});
    expect(() => limitOptions({ taskTimeout: "soon" }, "task-")).toThrow(
      '--task-timeout takes a duration like 1500ms, 90s or 5m, not "soon"',
    );
    expect(() => limitOptions({ maxSteps: "x" }, "")).toThrow('--max-steps takes a whole number ≥ 1, not "x"');
    expect(givenLimitFlags({ turnTimeout: "1m", turnMaxTokens: "9" }, "turn-")).toEqual([
      "--turn-max-tokens",
      "--turn-timeout",
    ]);
  });

  it("every flag in the table is one the program has, where the table says", () => {
    const program = buildProgram(quiet);
    const batch = program.commands.find((c) => c.name() === "batch")!;
    const names = (c: typeof program) => new Set(c.options.map((o) => o.long));
    for (const { flag } of Object.values(LIMIT_FLAGS)) {
      expect(names(program)).toContain(`--${flag}`);
      expect(names(program)).toContain(`--turn-${flag}`);
      expect(names(batch)).toContain(`--task-${flag}`);
    }
  });
});
