// Options are resolved once: defaults, paths, the environment, numbers, and the caller's names.
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { FLAG_LABELS } from "../../src/cli/flag-table.js";
import { optionsFromFlags, quietRequested } from "../../src/cli/flags.js";
import { buildProgram } from "../../src/cli/program.js";
import { rewriteResume } from "../../src/cli/resume.js";
import { formatDuration, parseDuration } from "../../src/kernel/duration.js";
import { DEFAULTS } from "../../src/plan/options.js";
import { resolveTurnOptions } from "../../src/plan/resolve-options.js";

describe("resolveTurnOptions", () => {
  it("applies every default in one place", () => {
    const r = resolveTurnOptions({ prompt: "hi", env: {} });
    expect(r).toMatchObject({
      placement: {
        opencode: null,
        dir: resolve("."),
        startupTimeout: { ms: DEFAULTS.startupTimeoutMs, option: "startupTimeoutMs" },
      },
      session: { id: null, continue: false, fork: false, title: null, ephemeral: false },
      turn: {
        model: null,
        allow: [],
        timeout: null,
        idleTimeout: null,
        killAfterMs: DEFAULTS.killAfterMs,
        budgets: {
          limits: { steps: null, tokens: null, cost_usd: null },
          names: { steps: "maxSteps", tokens: "maxTokens", cost_usd: "maxCostUsd" },
        },
        maxOutputBytes: DEFAULTS.maxOutputBytes,
        // Only when neither the caller nor opencode's log names the model.
        export: null,
        verify: null,
        rules: { failOn: { conditions: [], option: "failOn" }, advice: { allow: "allow", auto: "auto" } },
      },
    });
    expect(Object.keys(r)).toEqual(["placement", "session", "turn"]);
    expect(r).not.toHaveProperty("labels");
  });

  it("reads oc-exec's environment: OC_EXEC_OPENCODE, OC_EXEC_EXPORT=0; an option wins", () => {
    const env = { OC_EXEC_OPENCODE: "/opt/opencode", OC_EXEC_EXPORT: "0" };
    expect(resolveTurnOptions({ prompt: "x", env })).toMatchObject({
      placement: { opencode: "/opt/opencode" },
      turn: { export: false },
    });
    expect(resolveTurnOptions({ prompt: "x", env, opencode: "/bin/oc", export: true })).toMatchObject({
      placement: { opencode: "/bin/oc" },
      turn: { export: true },
    });
    // Naming the model makes the export unnecessary.
    expect(resolveTurnOptions({ prompt: "x", env: {}, model: "a/b" }).turn.export).toBe(false);
  });

  it("0 turns a limit off; paths become absolute", () => {
    const r = resolveTurnOptions({
      prompt: "x",
      env: {},
      timeoutMs: 0,
      startupTimeoutMs: 0,
      files: ["a.txt"],
      outputLastMessage: "o.md",
    });
    expect(r).toMatchObject({
      placement: { startupTimeout: null },
      turn: {
        timeout: null,
        files: { paths: [resolve("a.txt")], option: "files" },
        outputLastMessage: { path: resolve("o.md"), option: "outputLastMessage" },
      },
    });
  });

  it("each limit carries the option that set it, as the caller named it", () => {
    const r = resolveTurnOptions(
      { prompt: "x", env: {}, timeoutMs: 90_000, idleTimeoutMs: 5000, maxSteps: 3, retry: 1 },
      { labels: FLAG_LABELS },
    );
    expect([r.turn.timeout, r.turn.idleTimeout, r.placement.startupTimeout, r.turn.retryMaxDelay]).toEqual([
      { ms: 90_000, option: "--timeout" },
      { ms: 5000, option: "--idle-timeout" },
      { ms: DEFAULTS.startupTimeoutMs, option: "--startup-timeout" },
      { ms: DEFAULTS.retryMaxDelayMs, option: "--retry-max-delay" },
    ]);
    expect(r.turn.budgets).toEqual({
      limits: { steps: 3, tokens: null, cost_usd: null },
      names: { steps: "--max-steps", tokens: "--max-tokens", cost_usd: "--max-cost-usd" },
    });
  });

  it("every other value a later message names carries its option too: no table of names travels", () => {
    const r = resolveTurnOptions(
      {
        prompt: "x",
        env: {},
        agent: "build",
        files: ["a.md"],
        verify: ["npm test"],
        verifyTimeoutMs: 60_000,
        outputSchema: { type: "object" },
        outputLastMessage: "o.md",
        outputPatch: "p.diff",
        failOn: ["no-changes"],
      },
      { labels: FLAG_LABELS },
    );
    expect(r).toMatchObject({
      turn: {
        agent: { name: "build", option: "--agent" },
        files: { paths: [resolve("a.md")], option: "--file" },
        verify: {
          commands: ["npm test"],
          timeout: { ms: 60_000, option: "--verify-timeout" },
          attempts: DEFAULTS.verifyAttempts,
          option: "--verify",
        },
        outputSchema: { schema: { type: "object" }, option: "--output-schema" },
        outputLastMessage: { path: resolve("o.md"), option: "--output-last-message" },
        outputPatch: { path: resolve("p.diff"), option: "--output-patch" },
        rules: {
          failOn: { conditions: ["no-changes"], option: "--fail-on" },
          advice: { allow: "--allow", auto: "--auto" },
        },
      },
      session: { names: { session: "--session", continue: "--continue", fork: "--fork" } },
      placement: { names: { dir: "--dir", allowHosts: "--allow-host", attach: "--attach" } },
    });
  });

  it("rejects impossible numbers, in the caller's words", () => {
    expect(() => resolveTurnOptions({ prompt: "x", env: {}, maxSteps: -1 })).toThrow(
      "maxSteps must be a non-negative whole number, not -1",
    );
    expect(() => resolveTurnOptions({ prompt: "x", env: {}, maxOutputBytes: 0 }, { labels: FLAG_LABELS })).toThrow(
      "--max-output-bytes must be at least 1",
    );
    expect(() => resolveTurnOptions({ prompt: "x", env: {}, timeoutMs: Number.NaN })).toThrow(/timeoutMs must be/);
  });
});

describe("options that say two things, or half of one: refused before anything runs", () => {
  const resolveWith =
    (options: object, labels = FLAG_LABELS) =>
    () =>
      resolveTurnOptions({ prompt: "x", env: {}, ...options }, { labels });

  it("--fork without --session or --continue (opencode failed it seconds later, exit 1)", () => {
    expect(resolveWith({ fork: true })).toThrow(
      "--fork forks the session being resumed: it needs --session ID or --continue",
    );
    expect(() => resolveTurnOptions({ prompt: "x", env: {}, fork: true })).toThrow(
      "fork forks the session being resumed: it needs session ID or continue",
    );
    expect(resolveWith({ fork: true, session: "ses_1" })).not.toThrow();
    expect(resolveWith({ fork: true, continue: true })).not.toThrow();
  });

  it("--session and --continue together; --warm and --attach together", () => {
    expect(resolveWith({ session: "ses_1", continue: true })).toThrow(
      "--session and --continue both name the session to continue: give one",
    );
    expect(resolveWith({ warm: true, attach: "http://127.0.0.1:1" })).toThrow(
      "--warm finds or starts a server of its own and --attach names one: give one",
    );
  });
});

describe("flags to options", () => {
  it("leaves what was not given undefined, so the defaults stay in resolveTurnOptions", () => {
    const { options, cli } = optionsFromFlags({}, ["hi"]);
    expect(Object.values(options).every((v) => v === undefined)).toBe(true);
    expect(cli).toEqual({
      args: ["hi"],
      promptFile: null,
      stdinTimeoutMs: 5000,
      noStdin: false,
      display: { quiet: false, verbose: false, timestamps: false, color: "auto" },
      junit: null,
    });
  });

  it("parses durations, counts and lists, naming the flag when a value is wrong", () => {
    const { options } = optionsFromFlags(
      { timeout: "1m30s", maxSteps: "3", allow: ["read,grep", "list"], export: false },
      [],
    );
    expect(options).toMatchObject({ timeoutMs: 90_000, maxSteps: 3, allow: ["read", "grep", "list"], export: false });
    expect(() => optionsFromFlags({ idleTimeout: "soon" }, [])).toThrow(/^--idle-timeout takes a duration/);
    expect(() => optionsFromFlags({ maxOutputBytes: "0" }, [])).toThrow(/^--max-output-bytes takes a whole number ≥ 1/);
  });

  it("finds -q on a command line that did not parse", () => {
    expect(quietRequested(["--modle", "x", "-q", "hi"])).toBe(true);
    expect(quietRequested(["-xq"])).toBe(true);
    expect(quietRequested(["--", "-q"])).toBe(false);
    expect(quietRequested(["--quietly"])).toBe(false);
  });
});

describe("resume", () => {
  const program = buildProgram({ writeOut: () => {}, writeErr: () => {} });
  it.each([
    [
      ["resume", "ses_1", "go"],
      ["--session", "ses_1", "go"],
    ],
    [
      ["resume", "--last", "go"],
      ["--continue", "go"],
    ],
    [["resume"], ["--continue"]],
    [
      ["-q", "--timeout", "5m", "resume", "ses_1", "go"],
      ["-q", "--timeout", "5m", "--session", "ses_1", "go"],
    ],
    [
      ["-m", "resume", "hi"],
      ["-m", "resume", "hi"],
    ], // "resume" is -m's value here
    [
      ["--model=a/b", "resume", "--last"],
      ["--model=a/b", "--continue"],
    ],
    [
      ["please", "resume", "work"],
      ["please", "resume", "work"],
    ], // not the first word of the prompt
  ])("%j -> %j", (argv, expected) => expect(rewriteResume(argv, program)).toEqual(expected));
});

describe("durations", () => {
  it.each([
    ["1500ms", 1500],
    ["1m30s", 90_000],
    ["2h", 7_200_000],
    ["1h1m1s1ms", 3_661_001],
    ["2", 2000],
    ["0", 0],
  ])("%s = %d ms", (text, ms) => expect(parseDuration(text)).toBe(ms));
  it.each(["", "m", "1d", "1s1m", "-1s", "1 m"])("%j is not a duration", (text) =>
    expect(parseDuration(text)).toBeNull(),
  );
  it("formats limits exactly and elapsed times for people", () => {
    expect([1500, 5000, 90_000, 300_000, 7_200_000].map((ms) => formatDuration(ms, "exact"))).toEqual([
      "1500ms",
      "5s",
      "90s",
      "5m",
      "2h",
    ]);
    expect([850, 4120, 125_000].map((ms) => formatDuration(ms))).toEqual(["850ms", "4.1s", "2m5s"]);
    // Never "59m60s": whole seconds are rounded before they are split.
    expect(formatDuration(3_599_600)).toBe("60m0s");
  });
});
