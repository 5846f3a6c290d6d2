// The JUnit report (--junit): built from the event stream, valid against the junit-10 structure
// (checked by libxml2), every character XML forbids removed.
import { describe, expect, it } from "vitest";
import type { OcEvent, ResultEvent } from "../../src/contract/schema.js";
import { JunitCollector, renderJunit, xmlText } from "../../src/domain/reports/junit.js";
import { junitErrors } from "../support/junit-check.js";

const T = "2026-11-24T05:00:00.000Z";
function result(over: Partial<ResultEvent> = {}): ResultEvent {
  return {
    type: "result",
    seq: 5,
    time: T,
    session_id: "ses_1",
    ok: true,
    exit_code: 0,
    class: "success",
    error: null,
    model: "fake/fake-model",
    text: "Done.",
    usage: { input: 120, output: 8, reasoning: 0, cache_read: 0, cache_write: 0, total: 128 },
    cost_usd: 0.0012,
    duration_ms: 2500,
    steps: 1,
    tools: { total: 0, failed: 0, denied: 0 },
    files_changed: [],
    permission_denials: [],
    opencode: { exit_code: 0, signal: null },
    stream: { json_lines: 3, other_lines: 0, blank_lines: 0, warnings: 0 },
    ...over,
  } as ResultEvent;
}
const started = {
  type: "run.started",
  seq: 0,
  time: T,
  session_id: null,
  oc_exec_version: "0.1.0",
} as unknown as OcEvent;
const failed = (over: Partial<ResultEvent> = {}) =>
  result({
    ok: false,
    exit_code: 4,
    class: "api_error",
    error: { name: "APIError", message: "Unauthorized: bad key", status_code: 401, retryable: false },
    text: null,
    ...over,
  });

function report(events: OcEvent[], name = "oc-exec"): string {
  const collector = new JunitCollector(name);
  for (const e of events) collector.observe(e);
  return renderJunit(collector.suite());
}

describe("--junit reports", () => {
  it("a single turn that succeeded: one passed case with model, tokens and cost in system-out; valid", async () => {
    const xml = report([started, result()]);
    expect(await junitErrors(xml)).toEqual([]);
    expect(xml).toContain(
      '<testsuite name="oc-exec" tests="1" failures="0" errors="0" skipped="0" time="2.500" timestamp="2026-11-24T05:00:00">',
    );
    expect(xml).toContain('<testcase name="turn" classname="oc-exec" time="2.500">');
    expect(xml).toContain(
      "model: fake/fake-model\ntokens: 128 (120 in, 8 out, 0 reasoning, 0 cache read)\ncost_usd: 0.0012",
    );
    expect(xml).toContain("final message:\nDone.</system-out>");
    expect(xml).not.toContain("<failure");
  });

  it("any class but success is a failure: its type the class, its message the error, the exit code in its text", async () => {
    const xml = report([started, failed()]);
    expect(await junitErrors(xml)).toEqual([]);
    expect(xml).toContain(
      '<failure type="api_error" message="Unauthorized: bad key">exit 4: APIError: Unauthorized: bad key</failure>',
    );
    expect(xml).toContain('tests="1" failures="1"');
  });

  it("a conversation: a case per turn", async () => {
    const xml = report([
      started,
      result({ turn: 1 } as Partial<ResultEvent>),
      failed({ turn: 2 } as Partial<ResultEvent>),
      {
        type: "conversation.result",
        seq: 0,
        time: T,
        session_id: null,
        exit_code: 1,
        cost_usd: 0.0024,
        usage: { total: 256 },
      } as unknown as OcEvent,
    ]);
    expect(await junitErrors(xml)).toEqual([]);
    expect(xml).toContain('<testcase name="turn 1"');
    expect(xml).toContain('<testcase name="turn 2"');
    expect(xml).toContain('<property name="exit_code" value="1"/>');
  });

  it("a batch: a case per task in file order; not run is skipped with the reason; skipped on resume passes and says so", async () => {
    const xml = report(
      [
        result({ task_id: "a" } as Partial<ResultEvent>),
        failed({ task_id: "b" } as Partial<ResultEvent>),
        {
          type: "batch.result",
          seq: 0,
          time: T,
          session_id: null,
          exit_code: 6,
          cost_usd: 1,
          usage: { total: 300 },
          problems: [],
          tasks: [
            { id: "done-before", class: "success", exit_code: 0, cost_usd: 0, duration_ms: 0, run: "skipped" },
            { id: "a", class: "success", exit_code: 0, cost_usd: 0, duration_ms: 2500, run: "ran" },
            { id: "b", class: "api_error", exit_code: 4, cost_usd: 0, duration_ms: 2500, run: "ran" },
            {
              id: "c",
              class: "budget_exceeded",
              exit_code: 6,
              cost_usd: 0,
              duration_ms: 0,
              run: "not_run",
              error: { name: "BudgetExceeded", message: "the batch's --max-cost-usd 1 was spent before this task" },
            },
          ],
        } as unknown as OcEvent,
      ],
      "oc-exec batch",
    );
    expect(await junitErrors(xml)).toEqual([]);
    expect([...xml.matchAll(/<testcase name="([^"]+)"/g)].map((m) => m[1])).toEqual(["done-before", "a", "b", "c"]);
    expect(xml).toContain(`<skipped message="the batch's --max-cost-usd 1 was spent before this task"/>`);
    expect(xml).toContain(
      "<system-out>skipped on resume: it had already succeeded in the --resume stream</system-out>",
    );
    expect(xml).toContain('tests="4" failures="1" errors="0" skipped="1"');
  });

  it("characters XML forbids are removed (NUL, ESC, lone surrogates), markup is escaped: still valid", async () => {
    const hostile = `a\u0000b\u001b[31mred\u001b[0m <tag> & "quoted" \ud800 lone \udfff end 😀`;
    const xml = report([
      started,
      failed({ error: { name: "X", message: hostile, status_code: null, retryable: null }, text: hostile }),
    ]);
    expect(await junitErrors(xml)).toEqual([]);
    expect(xml.includes("\u0000")).toBe(false);
    expect(xml.includes("\u001b")).toBe(false);
    expect(xml).toContain('message="ab[31mred[0m &lt;tag&gt; &amp; &quot;quoted&quot;  lone  end 😀"');
    expect(xmlText("\ud83d\ude00 pair")).toBe("😀 pair");
  });

  it("the validator is not a rubber stamp: properties on a test case are refused", async () => {
    const bad = report([started, result()]).replace(
      '<testcase name="turn" classname="oc-exec" time="2.500">',
      '<testcase name="turn" classname="oc-exec" time="2.500"><properties><property name="x" value="y"/></properties>',
    );
    expect((await junitErrors(bad)).length).toBeGreaterThan(0);
  });
});
