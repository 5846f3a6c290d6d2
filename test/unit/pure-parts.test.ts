// The pure parts that end-to-end turns used to be the only test of: policy, configuration merging,
// structured output, budgets, stderr lines, error classes, the summary, locating opencode.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeModels } from "../../src/cli/doctor.js";
import { FLAG_LABELS } from "../../src/cli/flag-table.js";
import { parseMcp } from "../../src/cli/flag-values.js";
import type { OcEvent, ResultEvent } from "../../src/contract/schema.js";
import { errorClassOf, isConfigStderr } from "../../src/domain/events/error-class.js";
import { Normalizer } from "../../src/domain/events/normalize.js";
import { parseLogfmt, parseStderrLine } from "../../src/domain/events/stderr-lines.js";
import { deepMerge, mergeConfigContent } from "../../src/domain/opencode/config-content.js";
import { locateOpencode, searchPath } from "../../src/domain/opencode/locate.js";
import {
  buildPolicy,
  invalidInheritedPolicy,
  PERMISSION_KEYS,
  turnPolicy,
} from "../../src/domain/opencode/permissions.js";
import { checkBudgets as check, turnUse } from "../../src/domain/outcome/budget.js";
import { API_LABELS, type OptionLabels } from "../../src/domain/outcome/labels.js";
import { formatEventLine, formatMarkdownSummary, formatSummary } from "../../src/domain/progress/format.js";
import { checkStructuredOutput, extractJson } from "../../src/engine/structured-output.js";
import { splitCommand } from "../../src/kernel/command-words.js";

describe("permission policy", () => {
  const built = (...args: Parameters<typeof buildPolicy>) => {
    const policy = buildPolicy(...args);
    if (policy === null || "problem" in policy) throw new Error(`no policy: ${JSON.stringify(policy)}`);
    return policy;
  };
  it("an allow-list denies every other known key; --deny overrides; nothing given leaves opencode's config alone", () => {
    expect(buildPolicy([], [], FLAG_LABELS)).toBeNull();
    const policy = built(["read", "grep"], ["webfetch"], FLAG_LABELS);
    expect(Object.keys(policy.value).sort()).toEqual([...PERMISSION_KEYS].sort());
    expect(policy.value).toMatchObject({ read: "allow", grep: "allow", bash: "deny", webfetch: "deny" });
    expect(built([], ["bash"], FLAG_LABELS).value).toEqual({ bash: "deny" });
  });

  it("an unknown key passes with a warning; a key in both lists is an error naming the caller's options", () => {
    expect(built(["mcp_thing"], [], FLAG_LABELS).warnings).toEqual([
      {
        code: "unknown_permission",
        message: expect.stringMatching(/^mcp_thing is not a permission key oc-exec knows/),
      },
    ]);
    expect(buildPolicy(["grep"], ["grep"], FLAG_LABELS)).toEqual({ problem: "grep is in both --allow and --deny" });
    expect(buildPolicy(["grep"], ["grep"], API_LABELS)).toEqual({ problem: "grep is in both allow and deny" });
  });

  it("patterns: the key's other patterns are denied under an allow-list; denied patterns come last and win", () => {
    const policy = built(["read", "bash:npm test", "bash:git *", "edit:src/**"], ["bash:git push *"], FLAG_LABELS);
    expect(policy.value.bash).toEqual({ "*": "deny", "npm test": "allow", "git *": "allow", "git push *": "deny" });
    expect(Object.keys(policy.value.bash as object)).toEqual(["*", "npm test", "git *", "git push *"]);
    expect(policy.value.edit).toEqual({ "*": "deny", "src/**": "allow" });
    expect(policy.value).toMatchObject({ read: "allow", webfetch: "deny" });
    // A whole key allowed keeps its other patterns allowed; a lone deny pattern leaves the rest to opencode.
    expect(built(["bash"], ["bash:rm *"], FLAG_LABELS).value.bash).toEqual({ "*": "allow", "rm *": "deny" });
    expect(built([], ["bash:rm *"], FLAG_LABELS).value).toEqual({ bash: { "rm *": "deny" } });
    expect(built(["webfetch:https://example.com/*"], [], FLAG_LABELS).value.webfetch).toEqual({
      "*": "deny",
      "https://example.com/*": "allow",
    });
    expect(buildPolicy(["bash:"], [], FLAG_LABELS)).toEqual({ problem: "bash: needs a pattern after the colon" });
  });

  it("the turn's policy, built once: its value and the keys it removes whole, or the problem the turn reports", () => {
    const listed = turnPolicy(["read"], ["bash:rm *"], undefined, FLAG_LABELS);
    expect("removed" in listed && [...listed.removed].sort()).toEqual(
      PERMISSION_KEYS.filter((k) => k !== "read").sort(),
    );
    const inherited = turnPolicy([], [], '{"bash":"deny","read":"allow"}', FLAG_LABELS);
    expect(inherited).toEqual({ value: null, warnings: [], removed: new Set(["bash"]) });
    expect(turnPolicy([], [], '"deny"', FLAG_LABELS)).toMatchObject({ removed: new Set(["*"]) });
    expect(turnPolicy(["grep"], ["grep"], undefined, FLAG_LABELS)).toEqual({
      problem: { name: "UsageError", message: "grep is in both --allow and --deny" },
    });
    expect(turnPolicy([], [], "[1]", FLAG_LABELS)).toEqual({
      problem: {
        name: "PermissionConfigError",
        message: expect.stringMatching(/^OPENCODE_PERMISSION must be a JSON object/),
      },
    });
  });

  it("an inherited OPENCODE_PERMISSION must be a JSON object (or one action for everything)", () => {
    expect(invalidInheritedPolicy(undefined)).toBeNull();
    expect(invalidInheritedPolicy('{"bash":"deny"}')).toBeNull();
    expect(invalidInheritedPolicy('"deny"')).toBeNull();
    expect(invalidInheritedPolicy("{bash: deny}")).toMatch(/^OPENCODE_PERMISSION is not valid JSON/);
    expect(invalidInheritedPolicy("[1]")).toMatch(/^OPENCODE_PERMISSION must be a JSON object/);
  });
});

describe("configuration merging and --mcp", () => {
  it("deep-merges over the inherited value; arrays and scalars are replaced", () => {
    expect(deepMerge({ a: { b: 1, c: [1] }, d: 1 }, { a: { c: [2], e: 3 } })).toEqual({
      a: { b: 1, c: [2], e: 3 },
      d: 1,
    });
    const merged = mergeConfigContent(
      '{"provider":{"x":{}},"model":"x/y"}',
      [{ mcp: { fs: { type: "local" } } }],
      "--config",
    );
    expect(JSON.parse("content" in merged ? merged.content! : "")).toEqual({
      provider: { x: {} },
      model: "x/y",
      mcp: { fs: { type: "local" } },
    });
    expect(mergeConfigContent("{not json", [], "--config")).toEqual({ content: "{not json" }); // nothing to merge: untouched
    expect(mergeConfigContent("{not json", [{}], "--config/--mcp")).toEqual({
      problem: {
        name: "UsageError",
        message: "the inherited OPENCODE_CONFIG_CONTENT is not valid JSON, so --config/--mcp cannot be merged into it",
      },
    });
  });

  it("--mcp NAME=COMMAND keeps quoted words whole", () => {
    expect(splitCommand(`npx -y "a b" 'c d' e\\"f`)).toEqual(["npx", "-y", "a b", "c d", 'e\\"f']);
    expect(parseMcp("fs=npx -y server /data")).toEqual({
      mcp: { fs: { type: "local", command: ["npx", "-y", "server", "/data"], enabled: true } },
    });
    expect(() => parseMcp("=npx")).toThrow(/--mcp takes NAME=COMMAND/);
    expect(() => parseMcp("fs=")).toThrow(/--mcp takes NAME=COMMAND/);
  });
});

describe("structured output", () => {
  it("finds the JSON: the whole text, else the last fenced block, else the outermost braces", () => {
    expect(extractJson('{"a":1}')).toEqual({ value: { a: 1 } });
    expect(extractJson('Here:\n```json\n{"a":1}\n```\nand\n```json\n{"a":2}\n```')).toEqual({ value: { a: 2 } });
    expect(extractJson('The answer is {"a": [1, 2]} as asked.')).toEqual({ value: { a: [1, 2] } });
    expect(extractJson("no json here")).toBeNull();
  });

  it("validates against the schema and says why not, with the caller's option name", () => {
    const schema = { type: "object", required: ["files"], properties: { files: { type: "array" } } };
    expect(checkStructuredOutput(schema, '{"files":[]}', "--output-schema")).toEqual({ value: { files: [] } });
    expect(checkStructuredOutput(schema, '{"files":1}', "--output-schema")).toEqual({
      error: "the final message does not match --output-schema: /files must be array",
    });
    expect(checkStructuredOutput(schema, null, "outputSchema")).toEqual({
      error: "the turn produced no final message to check against outputSchema",
    });
  });
});

describe("budgets", () => {
  // One turn's view of the one checker: what the turn used, against its own limits.
  const checkBudgets = (
    f: Parameters<typeof turnUse>[0],
    budgets: { maxSteps: number | null; maxTokens: number | null; maxCostUsd: number | null; labels: OptionLabels },
    warned: Set<"steps" | "tokens" | "cost_usd">,
  ) =>
    check(
      turnUse(f),
      {
        limits: { steps: budgets.maxSteps, tokens: budgets.maxTokens, cost_usd: budgets.maxCostUsd },
        names: {
          steps: budgets.labels.maxSteps,
          tokens: budgets.labels.maxTokens,
          cost_usd: budgets.labels.maxCostUsd,
        },
      },
      warned,
    );
  const facts = () => new Normalizer({ workspace: "/w", session: null, maxOutputBytes: 10 }, () => {}).facts;
  it("warns once at 80% and stops past the limit; a step counts when it starts", () => {
    const f = facts();
    const warned = new Set<"steps" | "tokens" | "cost_usd">();
    const budgets = { maxSteps: 5, maxTokens: null, maxCostUsd: null, labels: FLAG_LABELS };
    f.steps = 4;
    expect(checkBudgets(f, budgets, warned)).toEqual({
      warnings: [{ code: "budget_warning", message: "--max-steps 5: 4 used, 80% of the limit" }],
      exceeded: null,
    });
    expect(checkBudgets(f, budgets, warned).warnings).toEqual([]);
    f.steps = 6;
    expect(checkBudgets(f, budgets, warned).exceeded).toEqual({
      kind: "budget",
      limit: "steps",
      max: 5,
      used: 6,
      option: "--max-steps",
    });
  });

  it("tokens are input + output + reasoning; cost is compared at 1e-8", () => {
    const f = facts();
    f.usage = { input: 100, output: 50, reasoning: 10, cache_read: 1000, cache_write: 0, total: 1160 };
    f.costUsd = 0.1 + 0.2;
    const check = checkBudgets(f, { maxSteps: null, maxTokens: 159, maxCostUsd: 0.3, labels: API_LABELS }, new Set());
    expect(check.exceeded).toEqual({ kind: "budget", limit: "tokens", max: 159, used: 160, option: "maxTokens" });
    expect(check.warnings).toEqual([
      { code: "budget_warning", message: "maxCostUsd 0.3: 0.3 used, 100% of the limit" },
    ]);
  });
});

describe("opencode's stderr", () => {
  it.each([
    [
      "\u001b[33m! permission requested: bash (echo hi); auto-rejecting\u001b[0m",
      { kind: "permission", permission: "bash", pattern: "echo hi" },
    ],
    [
      '! agent "x" not found. Falling back to default agent',
      { kind: "agent-fallback", agent: "x", text: 'agent "x" not found. Falling back to default agent' },
    ],
    ["Error: Session not found", { kind: "error", message: "Session not found" }],
    ["   ", { kind: "blank" }],
    ["something else", { kind: "other", text: "something else" }],
  ])("%j", (line, expected) => expect(parseStderrLine(line)).toEqual(expected));

  it("reads logfmt, quoted values included", () => {
    expect(parseLogfmt('level=ERROR ref=err_1 error="ProviderModelNotFoundError: Model \\"x\\" not found"')).toEqual({
      level: "ERROR",
      ref: "err_1",
      error: 'ProviderModelNotFoundError: Model "x" not found',
    });
    expect(parseStderrLine("level=INFO message=stream").kind).toBe("log");
    // 1.14's layout: the message last and bare.
    expect(
      parseStderrLine(
        "INFO  2026-11-23T06:44:10 +3ms service=llm providerID=fake modelID=fake-model small=false agent=build stream",
      ),
    ).toEqual({
      kind: "log",
      level: "INFO",
      fields: {
        service: "llm",
        providerID: "fake",
        modelID: "fake-model",
        small: "false",
        agent: "build",
        level: "INFO",
        timestamp: "2026-11-23T06:44:10Z",
        message: "stream",
      },
    });
  });
});

describe("error classes", () => {
  it.each([
    ["APIError", 401, "api_error"],
    ["APIError", null, "api_error"],
    ["ContextOverflowError", null, "context_overflow"],
    ["ProviderAuthError", null, "config_error"],
    ["ProviderModelNotFoundError", null, "config_error"],
    ["ConfigInvalidError", null, "config_error"],
    ["MessageOutputLengthError", null, "agent_error"],
    ["UnknownError", null, "agent_error"],
    ["provider_auth", null, "config_error"],
    ["context_length_exceeded", null, "context_overflow"],
    ["SomethingNew", 503, "api_error"],
  ])("%s (status %s) -> %s", (name, status, cls) => expect(errorClassOf(name, status)).toBe(cls));

  it("recognizes opencode's configuration complaints on stderr", () => {
    expect(isConfigStderr("Error: Configuration is invalid at OPENCODE_CONFIG_CONTENT")).toBe(true);
    expect(isConfigStderr("--- Errors ---")).toBe(true);
    expect(isConfigStderr("panic: boom")).toBe(false);
  });
});

describe("the summary on stderr", () => {
  const result = (over: Partial<ResultEvent> = {}): ResultEvent => ({
    type: "result",
    seq: 5,
    time: "2026-01-01T00:00:00.000Z",
    session_id: "ses_1",
    ok: true,
    exit_code: 0,
    class: "success",
    error: null,
    model: null,
    text: "done",
    usage: { input: 350, output: 26, reasoning: 0, cache_read: 0, cache_write: 0, total: 376 },
    cost_usd: 0,
    duration_ms: 8235,
    steps: 2,
    tools: { total: 1, failed: 0, denied: 0 },
    files_changed: [{ path: "notes.txt", change: "added" }],
    permission_denials: [],
    opencode: { exit_code: 0, signal: null },
    stream: { json_lines: 6, other_lines: 0, blank_lines: 0, warnings: 0 },
    ...over,
  });

  it("says the outcome, the figures, the files and how to resume", () => {
    expect(formatSummary(result())).toEqual([
      "✔ success (exit 0)",
      "  8.2s · 2 steps · 1 tool · 376 tokens (350 in, 26 out) · $0",
      "  files changed: notes.txt (added)",
      '  session ses_1 · resume: oc-exec --session ses_1 "..."',
    ]);
  });

  it("a failure names its class and error; a deleted session offers no resume", () => {
    const failed = result({
      ok: false,
      exit_code: 4,
      class: "api_error",
      error: { name: "APIError", message: "bad key", status_code: 401, retryable: false },
      session_deleted: true,
      files_changed: [],
      tools: { total: 2, failed: 1, denied: 1 },
    });
    expect(formatSummary(failed)).toEqual([
      "✖ api_error (exit 4): the model provider's API failed (auth, rate limit, server error, network)",
      "  APIError: bad key",
      "  8.2s · 2 steps · 2 tools, 1 failed, 1 denied · 376 tokens (350 in, 26 out) · $0",
    ]);
    expect(formatMarkdownSummary(failed)).toContain("| outcome | ❌ api_error (exit 4) |");
  });
});

describe("the agent's names in the log and the step summary", () => {
  // GitHub's runner reads a line of stdout or stderr that starts with `::` as a command.
  const hostile = "a\n::stop-commands::x\r::add-mask::y\u001b[2K`|*[z](https://e.example)";
  const event = (over: Record<string, unknown>) => ({ seq: 1, time: "t", session_id: "ses_1", ...over }) as OcEvent;
  const summaryResult: ResultEvent = {
    type: "result",
    seq: 5,
    time: "t",
    session_id: "ses_1",
    ok: true,
    exit_code: 0,
    class: "success",
    error: null,
    model: null,
    text: "done",
    usage: { input: 1, output: 1, reasoning: 0, cache_read: 0, cache_write: 0, total: 2 },
    cost_usd: 0,
    duration_ms: 1,
    steps: 1,
    tools: { total: 0, failed: 0, denied: 0 },
    files_changed: [],
    permission_denials: [],
    opencode: { exit_code: 0, signal: null },
    stream: { json_lines: 1, other_lines: 0, blank_lines: 0, warnings: 0 },
  };

  it("every event line and the summary stay one line each, control characters shown escaped", () => {
    const lines = [
      formatEventLine(event({ type: "file.changed", path: hostile, change: "added" })),
      formatEventLine(event({ type: "warning", code: "sandbox_outside_link", message: hostile })),
      formatEventLine(event({ type: "permission.denied", permission: "bash", tool: "bash", pattern: hostile })),
      formatEventLine(
        event({ type: "error", class: "agent_error", name: hostile, message: hostile, status_code: null }),
      ),
      ...formatSummary({
        ...summaryResult,
        ok: false,
        exit_code: 2,
        class: "agent_error",
        error: { name: "E", message: hostile, status_code: null, retryable: null },
        files_changed: [{ path: hostile, change: "added" }],
      }),
    ];
    for (const line of lines) expect(line!.split(/\r|\n/)).toHaveLength(1);
    expect(lines[0]).toBe("  added a\\n::stop-commands::x\\u000d::add-mask::y\\u001b[2K`|*[z](https://e.example)");
    expect(lines.join("")).not.toContain("\u001b");
  });

  it("the step summary shows a name as text: no cell, markup or link of its own", () => {
    const markdown = formatMarkdownSummary({ ...summaryResult, files_changed: [{ path: hostile, change: "added" }] });
    expect(markdown).toContain(
      "| files changed | <code>a\\\\n\\:\\:stop\\-commands\\:\\:x\\\\u000d\\:\\:add\\-mask\\:\\:y\\\\u001b\\[2K\\`\\|\\*\\[z\\]\\(https\\:\\/\\/e\\.example\\)</code> (added) |",
    );
  });
});

describe("doctor's model line", () => {
  it("counts in words that agree with the numbers", () => {
    expect(describeModels(["opencode/a"])).toBe("1 model from 1 provider (opencode)");
    expect(describeModels(["opencode/a", "opencode/b", "fake/c"])).toBe("3 models from 2 providers (opencode, fake)");
    expect(describeModels([])).toBe("opencode lists no models");
  });
});

describe("locating opencode", () => {
  // Made in beforeAll: a run filtered past these tests (-t) must not leave the directory behind.
  let dir = "";
  let exe = "";
  let plain = "";
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "oc-exec-locate-"));
    exe = join(dir, "opencode");
    writeFileSync(exe, "#!/bin/sh\n");
    chmodSync(exe, 0o755);
    plain = join(dir, "plain");
    writeFileSync(plain, "");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("an explicit path wins, and must be an executable file", () => {
    expect(locateOpencode(exe, "")).toEqual({
      ok: true,
      binary: { path: exe, source: "explicit", packageVersion: null },
    });
    expect(locateOpencode(join(dir, "nope"), "")).toMatchObject({
      ok: false,
      message: `opencode binary not found at ${join(dir, "nope")}`,
    });
    expect(locateOpencode(plain, "")).toMatchObject({ ok: false, message: `${plain} is not an executable file` });
    expect(locateOpencode(dir, "")).toMatchObject({ ok: false, message: `${dir} is not an executable file` });
  });

  it("else the bundled dependency (installed here), else PATH", () => {
    expect(locateOpencode(null, "")).toMatchObject({
      ok: true,
      binary: { source: "bundled", packageVersion: "1.18.33" },
    });
    expect(searchPath("opencode", `/nonexistent:${dir}`)).toBe(exe);
    expect(searchPath("plain", dir)).toBeNull();
  });
});
