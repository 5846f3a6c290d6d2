// --junit with the real opencode: a turn, a failure, a signal, a conversation, a batch and a merge,
// each report valid against the junit-10 structure (libxml2) and saying exactly what the stream said.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { junitErrors } from "../support/junit-check.js";
import { eventsOf, parseLines } from "../support/run-cli.js";

const e2e = useE2E();
const reportPath = (name: string) => join(e2e.home.root, `${name}.xml`);
const casesOf = (xml: string) => [...xml.matchAll(/<testcase name="([^"]+)"/g)].map((m) => m[1]);

describe("--junit", () => {
  it("a turn that succeeded: one passed case, valid", async () => {
    const file = reportPath("ok");
    const run = await e2e.run(["-q", "--junit", file, "scenario:plain junit-ok"]);
    expect(run.code).toBe(0);
    const xml = readFileSync(file, "utf8");
    expect(await junitErrors(xml)).toEqual([]);
    expect(casesOf(xml)).toEqual(["turn"]);
    expect(xml).toContain('tests="1" failures="0" errors="0" skipped="0"');
    expect(xml).toContain("final message:\nHello from the scripted model.</system-out>");
    // stdout is untouched: the same events as without --junit.
    expect(run.types).toEqual(["run.started", "session.started", "step.started", "message", "step.finished", "result"]);
  }, 60_000);

  it("a 401: a failure of type api_error with the result's message and the exit code", async () => {
    const file = reportPath("401");
    const run = await e2e.run(["-q", "--junit", file, "scenario:http-401 junit"]);
    expect(run.code).toBe(4);
    const xml = readFileSync(file, "utf8");
    expect(await junitErrors(xml)).toEqual([]);
    const message = run.result.error!.message;
    expect(xml).toContain(
      `<failure type="api_error" message="${message.replace(/&/g, "&amp;").replace(/"/g, "&quot;")}">exit 4: ${run.result.error!.name}: `,
    );
  }, 60_000);

  it("an unwritable path is exit 5 before anything runs: no model request, no report", async () => {
    const file = join(e2e.home.root, "no-such-dir", "report.xml");
    const run = await e2e.run(["-q", "--junit", file, "scenario:plain junit-never"]);
    expect(run.code).toBe(5);
    expect(run.result.error!.message).toMatch(
      /^--junit .*no-such-dir\/report\.xml: cannot write in .*no-such-dir \(ENOENT\)$/,
    );
    expect(e2e.requestsFor("junit-never")).toEqual([]);
    expect(existsSync(file)).toBe(false);
  }, 60_000);

  it("SIGTERM mid-turn: the report is still written, a failure of type terminated", async () => {
    const file = reportPath("sigterm");
    const run = await e2e.runRaw(["-q", "--auto", "--junit", file, "scenario:sleep-tool junit-term"], {
      onStdout: (text, child) => {
        if (text.includes('"type":"tool"') || text.includes('"session.started"'))
          setTimeout(() => child.kill("SIGTERM"), 1500);
      },
    });
    expect(run.code).toBe(143);
    const xml = readFileSync(file, "utf8");
    expect(await junitErrors(xml)).toEqual([]);
    expect(xml).toContain('<failure type="terminated"');
  }, 60_000);

  it("--timeout: the report says timeout", async () => {
    const file = reportPath("timeout");
    const run = await e2e.run(["-q", "--timeout", "2s", "--junit", file, "scenario:slow junit-timeout"]);
    expect(run.code).toBe(124);
    expect(readFileSync(file, "utf8")).toContain('<failure type="timeout"');
  }, 60_000);

  it("a conversation: a case per turn (the scripted model plays the session's first prompt on every turn)", async () => {
    const file = reportPath("conversation");
    const run = await e2e.run(["-q", "--input-format", "jsonl", "--junit", file], {
      stdin: `${JSON.stringify({ prompt: "scenario:plain junit-c1" })}\n${JSON.stringify({ prompt: "and then?" })}\n`,
    });
    expect(run.code).toBe(0);
    const xml = readFileSync(file, "utf8");
    expect(await junitErrors(xml)).toEqual([]);
    expect(casesOf(xml)).toEqual(["turn 1", "turn 2"]);
    expect(xml).toContain('tests="2" failures="0"');
    expect(xml).toContain('<property name="exit_code" value="0"/>');
  }, 90_000);

  it("a batch and a merge of its shards: a case per task, the same verdicts", async () => {
    const tasks = join(e2e.home.root, "junit-tasks.jsonl");
    writeFileSync(
      tasks,
      ["ok-1", "bad-2", "ok-3", "ok-4"]
        .map((id) => JSON.stringify({ id, prompt: id.startsWith("bad") ? "scenario:http-401 j" : "scenario:plain j" }))
        .join("\n"),
    );
    const whole = reportPath("batch");
    const run = await e2e.runRaw(["batch", tasks, "-q", "--junit", whole]);
    expect(run.code).toBe(1);
    const xml = readFileSync(whole, "utf8");
    expect(await junitErrors(xml)).toEqual([]);
    expect(casesOf(xml)).toEqual(["ok-1", "bad-2", "ok-3", "ok-4"]);
    expect(xml).toContain('tests="4" failures="1" errors="0" skipped="0"');
    expect(xml).toContain('<failure type="api_error"');

    const shards = [];
    for (const i of [1, 2]) {
      const out = join(e2e.home.root, `junit-shard-${i}.jsonl`);
      const shard = await e2e.runRaw(["batch", tasks, "-q", "--shard", `${i}/2`]);
      writeFileSync(out, shard.stdout);
      shards.push(out);
    }
    const merged = reportPath("merge");
    const merge = await e2e.runRaw(["merge", "--tasks", tasks, "--junit", merged, ...shards]);
    expect(merge.code).toBe(1);
    const mergedXml = readFileSync(merged, "utf8");
    expect(await junitErrors(mergedXml)).toEqual([]);
    expect(casesOf(mergedXml)).toEqual(casesOf(xml));
    expect(eventsOf({ events: parseLines(merge.stdout) } as never, "batch.result")).toHaveLength(1);
  }, 240_000);
});
