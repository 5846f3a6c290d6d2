// The one runner through the CLI: a batch whose backend cannot be made does not run at all (exit 5,
// one batch.result naming why); a task's budget is named as the task line or the flag named it,
// with the real opencode; and the rule for 0 on every command-line path.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { BatchResult, OcEvent, ResultEvent } from "../../src/contract/schema.js";
import { providerConfig } from "../../src/domain/scripted/hermetic-home.js";
import { useE2E } from "../support/e2e.js";
import { checkStream } from "../support/schema-check.js";

const e2e = useE2E();

const tasksFile = (name: string, tasks: object[]) => {
  const file = join(e2e.home.root, name);
  writeFileSync(file, `${tasks.map((t) => JSON.stringify(t)).join("\n")}\n`);
  return file;
};

async function batch(args: string[], extraEnv: Record<string, string> = {}) {
  const run = await e2e.runRaw(args, { extraEnv });
  const events: OcEvent[] = run.stdout === "" ? [] : checkStream(run.stdout);
  return { ...run, events, summary: events.at(-1) as BatchResult };
}

describe("a batch whose backend cannot be made", () => {
  it.each([
    ["localhost:4096", 'UsageError: --attach "localhost:4096" must be an http:// or https:// URL'],
    ["http://127.0.0.1:1", "http://127.0.0.1:1"],
  ])("batch --attach %s: exit 5, one batch.result naming the URL, no task runs", async (url, named) => {
    const file = tasksFile("two.jsonl", [
      { id: "a", prompt: "scenario:plain a" },
      { id: "b", prompt: "scenario:plain b" },
    ]);
    const before = e2e.server.requests.length;
    const run = await batch(["batch", file, "--attach", url]);
    expect(run.code).toBe(5);
    expect(run.events.map((e) => e.type)).toEqual(["batch.result"]);
    expect(run.summary).toMatchObject({ ok: false, exit_code: 5, tasks: [], counts: {} });
    expect(run.summary.problems).toHaveLength(1);
    expect(run.summary.problems[0]).toContain(named);
    expect(run.stderr).toContain(named);
    expect(e2e.server.requests.length).toBe(before);
  });
});

describe("a task's budget is named as the user wrote it", () => {
  it("max_cost_usd from the task line, --task-max-cost-usd from the flag; exit 1", async () => {
    const priced = JSON.parse(providerConfig(e2e.server.url)) as {
      provider: { fake: { models: Record<string, object> } };
    };
    priced.provider.fake.models["fake-model"] = { name: "Fake", cost: { input: 100, output: 200 } };
    const file = tasksFile("priced.jsonl", [
      { id: "own", prompt: "scenario:loop-tools own", max_cost_usd: 0.25 },
      { id: "flag", prompt: "scenario:loop-tools flag" },
    ]);
    const run = await batch(["batch", file, "-q", "--task-max-cost-usd", "0.2"], {
      OPENCODE_CONFIG_CONTENT: JSON.stringify(priced),
    });
    expect(run.code).toBe(1);
    const result = (id: string) =>
      run.events.find((e): e is ResultEvent => e.type === "result" && e.task_id === id)!.error;
    // $0.11 a step: the third step crosses 0.25, the second crosses 0.2.
    expect(result("own")).toMatchObject({
      name: "BudgetExceeded",
      message: "max_cost_usd 0.25 was crossed: the turn used 0.33; oc-exec stopped it",
    });
    expect(result("flag")).toMatchObject({
      name: "BudgetExceeded",
      message: "--task-max-cost-usd 0.2 was crossed: the turn used 0.22; oc-exec stopped it",
    });
  });
});

describe("the rule for 0 on every command-line path: a budget of 0 is exit 5 before anything runs", () => {
  it("a single turn: --max-steps 0 is a usage error; --timeout 0 is off", async () => {
    const run = await e2e.run(["-q", "--max-steps", "0", "scenario:plain zero-steps"]);
    expect(run.code).toBe(5);
    expect(run.types).toEqual(["run.started", "result"]);
    expect(run.result.error?.message).toMatch(/^--max-steps must be more than 0/);
    expect(e2e.requestsFor("zero-steps")).toEqual([]);
  });

  it.each([
    [["--max-tokens", "0"], /^--max-tokens must be more than 0/],
    [["--turn-max-cost-usd", "0"], /^--turn-max-cost-usd must be more than 0/],
  ])("a conversation %j: exit 5, no turn runs", async (flags, message) => {
    const run = await e2e.run(["-q", "--input-format", "jsonl", ...flags], { stdin: '"scenario:plain zero-convo"\n' });
    expect(run.code).toBe(5);
    expect(run.result.error?.message).toMatch(message);
    expect(e2e.requestsFor("zero-convo")).toEqual([]);
  });

  it.each([
    [["--task-max-steps", "0"], {}, /^--task-max-steps must be more than 0/],
    [["--max-cost-usd", "0"], {}, /^--max-cost-usd must be more than 0/],
    [[], { max_tokens: 0 }, /^.*zero\.jsonl:1: max_tokens must be more than 0/],
  ])("a batch %j %j: exit 5, one batch.result naming it, nothing runs", async (flags, fields, message) => {
    const file = tasksFile("zero.jsonl", [{ id: "a", prompt: "scenario:plain zero-batch", ...fields }]);
    const run = await batch(["batch", file, "-q", ...flags]);
    expect(run.code).toBe(5);
    expect(run.events.map((e) => e.type)).toEqual(["batch.result"]);
    expect(run.summary.problems).toEqual([expect.stringMatching(message)]);
    expect(e2e.requestsFor("zero-batch")).toEqual([]);
  });
});
