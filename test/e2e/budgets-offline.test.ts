// Budgets enforced live against the real opencode and a model that keeps calling tools; and the
// offline commands, replay and validate.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { providerConfig } from "../../src/domain/scripted/hermetic-home.js";
import { useE2E } from "../support/e2e.js";
import { loadFixture } from "../support/fixtures.js";
import { eventsOf, runCliRaw } from "../support/run-cli.js";

const e2e = useE2E();

/** The fake model with prices, so opencode reports a cost per step ($ per million tokens). */
function pricedConfig(url: string): string {
  const config = JSON.parse(providerConfig(url)) as { provider: { fake: { models: Record<string, object> } } };
  config.provider.fake.models["fake-model"] = { name: "Fake", cost: { input: 100, output: 200 } };
  return JSON.stringify(config);
}

describe("budgets", () => {
  it("--max-steps stops a looping agent: budget_exceeded, 6, after a warning at 80%", async () => {
    const run = await e2e.run(["-q", "--max-steps", "3", "scenario:loop-tools go"]);
    expect(run.code).toBe(6);
    expect(run.result.class).toBe("budget_exceeded");
    expect(run.result.error).toMatchObject({
      name: "BudgetExceeded",
      message: "--max-steps 3 was crossed: opencode started step 4; oc-exec stopped it",
      budget: { limit: "steps", max: 3, used: 4 },
    });
    expect(eventsOf(run, "warning").map((w) => [w.code, w.message])).toEqual([
      ["budget_warning", "--max-steps 3: 3 used, 100% of the limit"],
    ]);
    expect(run.result.steps).toBe(4);
  });

  it("--max-tokens counts input + output + reasoning over all steps", async () => {
    const run = await e2e.run(["-q", "--max-tokens", "2500", "scenario:loop-tools go"]);
    expect(run.code).toBe(6);
    // Each looping step reports 1000 input + 50 output tokens.
    expect(run.result.error).toMatchObject({ budget: { limit: "tokens", max: 2500, used: 3150 } });
    expect(eventsOf(run, "warning")[0]).toMatchObject({
      code: "budget_warning",
      message: "--max-tokens 2500: 2100 used, 84% of the limit",
    });
  });

  it("--max-cost-usd uses the cost opencode reports per step", async () => {
    const run = await e2e.run(["-q", "--max-cost-usd", "0.25", "scenario:loop-tools go"], {
      extraEnv: { OPENCODE_CONFIG_CONTENT: pricedConfig(e2e.server.url) },
    });
    expect(run.code).toBe(6);
    // 1000 input tokens at $100/M + 50 output at $200/M = $0.11 per step: the third step crosses $0.25.
    expect(run.result.error).toMatchObject({ budget: { limit: "cost_usd", max: 0.25, used: 0.33 } });
    expect(eventsOf(run, "step.finished").map((s) => s.cost_usd)).toEqual([0.11, 0.11, 0.11]);
  });
});

describe("oc-exec replay", () => {
  it("a recorded fixture gives the events, class and exit code of a live run", async () => {
    const fixture = loadFixture("1.18.33", "api-401")!;
    const run = await e2e.run(["replay", "-q", fixture.dir]);
    expect(run.code).toBe(4);
    expect(run.types).toEqual(["run.started", "session.started", "error", "result"]);
    expect(run.result.error).toEqual({
      name: "APIError",
      message: "Incorrect API key provided: sk-[REDACTED]",
      status_code: 401,
      retryable: false,
    });
    expect(eventsOf(run, "run.started")[0]!.opencode).toEqual({ path: null, version: "1.18.33" });
  });

  it("reads stdout from stdin and stderr from --stderr, with --exit-code", async () => {
    const fixture = loadFixture("1.18.33", "unknown-model")!;
    const run = await e2e.run(["replay", "-q", "-", "--stderr", join(fixture.dir, "stderr.txt"), "--exit-code", "1"], {
      stdin: fixture.stdout.toString("utf8"),
    });
    expect(run.code).toBe(5);
    expect(run.result.error!.message).toMatch(/^Model not found: fake\/nope\./);
  });

  it("a missing file is a usage error on stderr, exit 5", async () => {
    const raw = await runCliRaw(["replay", "/nonexistent.jsonl"], { env: e2e.home.env });
    expect(raw.code).toBe(5);
    expect(raw.stdout).toBe("");
    expect(raw.stderr).toBe("oc-exec replay: cannot read /nonexistent.jsonl: ENOENT\n");
  });
});

describe("oc-exec validate", () => {
  it("accepts what oc-exec wrote, and reports every broken rule with its line", async () => {
    const good = await e2e.run(["-q", "--opencode", "/nonexistent", "hi"]);
    const file = join(e2e.home.root, "events.jsonl");
    writeFileSync(file, good.stdout);
    const ok = await runCliRaw(["validate", file], { env: e2e.home.env });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toBe(`${file}: 2 events, valid\n`);

    const lines = good.stdout.trimEnd().split("\n");
    const result = JSON.parse(lines[1]!);
    const broken = `${[lines[0], "not json", JSON.stringify({ ...result, seq: 5, exit_code: 0 })].join("\n")}\n`;
    writeFileSync(file, broken);
    const bad = await runCliRaw(["validate", "--json", file], { env: e2e.home.env });
    expect(bad.code).toBe(1);
    const report = JSON.parse(bad.stdout);
    expect(report).toMatchObject({ ok: false, events: 2 });
    expect(report.problems.map((p: { line: number; message: string }) => `${p.line}: ${p.message}`)).toEqual([
      "2: not JSON: not json",
      "3: seq 5, expected 1",
      "3: exit_code 0 does not match class config_error (5)",
    ]);
    expect(readFileSync(file, "utf8")).toBe(broken);
  });

  it("a problem with the whole stream names no line", async () => {
    const good = await e2e.run(["-q", "--opencode", "/nonexistent", "hi"]);
    const file = join(e2e.home.root, "no-result.jsonl");
    writeFileSync(file, `${good.stdout.split("\n")[0]}\n`);
    const bad = await runCliRaw(["validate", file], { env: e2e.home.env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      `${file}: 0 result events, expected exactly one\n${file}:1: last event is run.started, not result\n${file}: 2 problem(s) in 1 events\n`,
    );
  });
});
