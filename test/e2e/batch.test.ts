// oc-exec batch and merge with the real opencode server (started and stopped by each batch) and
// the scripted model server: every class in one batch, the batch budget, a resumed batch, Ctrl-C,
// and shards merged back into the unsharded result.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { BatchResult, OcEvent, ResultEvent } from "../../src/contract/schema.js";
import { useE2E } from "../support/e2e.js";
import { descendants, isAlive, waitFor } from "../support/procs.js";
import { BIN, runBash } from "../support/run-cli.js";
import { checkStream } from "../support/schema-check.js";
import { screenFrames } from "../support/tmux.js";
import { readRecords } from "../support/warm-server.js";

const e2e = useE2E();

type BatchRun = { code: number | null; stdout: string; stderr: string; events: OcEvent[]; summary: BatchResult };

function batch(
  args: string[],
  options: { onSpawn?: (child: ChildProcess) => void; env?: Record<string, string> } = {},
) {
  return new Promise<BatchRun>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...e2e.home.env, ...options.env },
      cwd: e2e.home.workspace,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    options.onSpawn?.(child);
    child.on("close", (code) => {
      const events = stdout === "" ? [] : checkStream(stdout);
      resolve({ code, stdout, stderr, events, summary: events.at(-1) as BatchResult });
    });
  });
}

const tasksFile = (name: string, tasks: object[]) => {
  const file = join(e2e.home.root, name);
  writeFileSync(file, `${tasks.map((t) => JSON.stringify(t)).join("\n")}\n`);
  return file;
};

const resultOf = (run: BatchRun, id: string) =>
  run.events.find((e): e is ResultEvent => e.type === "result" && e.task_id === id);

const classes = (summary: BatchResult) => Object.fromEntries(summary.tasks.map((t) => [t.id, t.class]));

/** No server of this file's HOME is left, and no tool under one. */
async function expectNothingLeft(): Promise<void> {
  expect(readRecords(e2e.home.env.XDG_STATE_HOME!)).toEqual([]);
  expect(descendants(process.pid).filter((p) => /opencode serve|sleep 300|supervise/.test(p.cmdline))).toEqual([]);
}

describe("oc-exec batch", () => {
  it("a mixed batch of 12 tasks: each its own class, every event marked, one summary; exit 1", async () => {
    const file = tasksFile("mixed.jsonl", [
      { id: "plain", prompt: "scenario:plain hello" },
      { id: "tool", prompt: "scenario:tool run echo" },
      { id: "write", prompt: "scenario:write a note" },
      { id: "denied", prompt: "scenario:tool run echo", deny: ["bash"] },
      { id: "outside", prompt: "scenario:read-outside read it" },
      { id: "api-401", prompt: "scenario:http-401" },
      { id: "timeout", prompt: "scenario:slow wait", timeout: "2s" },
      { id: "over-budget", prompt: "scenario:loop-tools go", max_steps: 2 },
      { id: "overflow", prompt: "scenario:context-overflow" },
      { id: "length", prompt: "scenario:length" },
      { id: "no-model", prompt: "scenario:plain", model: "fake/nope" },
      { id: "auto", prompt: "scenario:tool run echo", auto: true },
    ]);
    const run = await batch(["batch", file, "--concurrency", "4"]);
    expect(run.code).toBe(1);
    expect(classes(run.summary)).toEqual({
      plain: "success",
      tool: "success",
      write: "success",
      denied: "approval_denied",
      outside: "approval_denied",
      "api-401": "api_error",
      timeout: "timeout",
      "over-budget": "budget_exceeded",
      overflow: "context_overflow",
      length: "agent_error",
      "no-model": "config_error",
      auto: "success",
    });
    expect(run.summary).toMatchObject({
      ok: false,
      exit_code: 1,
      counts: {
        success: 4,
        approval_denied: 2,
        api_error: 1,
        timeout: 1,
        budget_exceeded: 1,
        context_overflow: 1,
        agent_error: 1,
        config_error: 1,
      },
      shard: null,
      problems: [],
    });
    for (const t of run.summary.tasks) {
      expect(t.run).toBe("ran");
      expect(resultOf(run, t.id)?.exit_code).toBe(t.exit_code);
    }
    expect(run.events.filter((e) => e.type !== "batch.result").every((e) => e.task_id !== undefined)).toBe(true);
    expect(run.summary.usage.total).toBe(
      run.events.filter((e): e is ResultEvent => e.type === "result").reduce((n, r) => n + r.usage.total, 0),
    );
    expect(run.stderr).toMatch(/^\[\d+\/12\] plain: success \(0\)/m);
    expect(run.stderr).toContain("oc-exec batch: 12 task(s): 4 success");
    await expectNothingLeft();
  });

  it("in a terminal: one live line (done, running, failed, cost, the running tasks) above which finished tasks print", async () => {
    // Each task ends only when the test opens its gate, after the screen showed the line before it:
    // what is asserted does not depend on how fast this machine is.
    const gates = { quick: join(e2e.home.root, "tty-gate-quick"), slow: join(e2e.home.root, "tty-gate-slow") };
    const file = tasksFile("tty.jsonl", [
      { id: "quick", prompt: `scenario:gated gate:${gates.quick}` },
      { id: "slow", prompt: `scenario:gated gate:${gates.slow}` },
    ]);
    const out = join(e2e.home.root, "tty.jsonl.out");
    const bothRunning = /0\/2 done · 2 running · 0 failed · \$0\.0000 · quick, slow/;
    const oneRunning = /1\/2 done · 1 running · 0 failed · \$0\.0000 · slow/;
    const frames = await screenFrames(
      `cd ${e2e.home.workspace} && ${process.execPath} ${BIN} batch ${file} > ${out}`,
      e2e.home.env,
      {
        timeoutMs: 60_000,
        onFrame: (frame) => {
          if (bothRunning.test(frame)) writeFileSync(gates.quick, "");
          if (oneRunning.test(frame) && /\[1\/2\] quick: success \(0\)/.test(frame)) writeFileSync(gates.slow, "");
        },
      },
    );
    expect(frames.some((f) => bothRunning.test(f))).toBe(true);
    expect(frames.some((f) => oneRunning.test(f))).toBe(true);
    const screen = frames.at(-1)!;
    expect(screen).toMatch(/\[1\/2\] quick: success \(0\)/);
    expect(screen).toMatch(/\[2\/2\] slow: success \(0\)/);
    expect(screen).toContain("oc-exec batch: 2 task(s): 2 success");
    expect(screen).toContain("exit=0");
    checkStream(readFileSync(out, "utf8"));
  });

  it("in a terminal, a re-run with every task already done says so and ends at once, leaving no spinner", async () => {
    const file = tasksFile("all-done.jsonl", [{ id: "done", prompt: "scenario:plain all done" }]);
    const previous = join(e2e.home.root, "all-done.out");
    writeFileSync(previous, (await batch(["batch", file, "-q"])).stdout);
    const frames = await screenFrames(
      `cd ${e2e.home.workspace} && ${process.execPath} ${BIN} batch ${file} --resume ${previous} > /dev/null`,
      e2e.home.env,
      { timeoutMs: 30_000 },
    );
    const screen = frames.at(-1)!;
    expect(screen).toContain("1 task(s) skipped: they succeeded in the --resume stream");
    expect(screen).toContain("oc-exec batch: 1 task(s): none run, 1 skipped");
    expect(screen).toContain("exit=0");
    // Nothing is drawn after the summary: no spinner started late.
    expect(screen.slice(screen.indexOf("exit=0"))).not.toMatch(/done · \d+ running/);
    expect(screen).not.toMatch(/\d\/1 done · 0 running/);
  });

  it("in a terminal that cannot move the cursor (TERM=dumb) or under NO_COLOR: plain lines, no live line", async () => {
    const file = tasksFile("dumb.jsonl", [{ id: "one", prompt: "scenario:plain one" }]);
    // Set in the command: tmux gives its panes a TERM of its own.
    for (const setting of ["TERM=dumb", "NO_COLOR=1"]) {
      const frames = await screenFrames(
        `cd ${e2e.home.workspace} && ${setting} ${process.execPath} ${BIN} batch ${file} > /dev/null`,
        e2e.home.env,
        { timeoutMs: 30_000 },
      );
      expect(frames.some((f) => /done · \d+ running/.test(f))).toBe(false);
      const screen = frames.at(-1)!;
      expect(screen).toMatch(/^\[1\/1\] one: success \(0\)/m);
      expect(screen).toContain("exit=0");
    }
  });

  it("a task's dir is taken from the batch's --dir; a missing one is found before anything runs: exit 5", async () => {
    const checkout = join(e2e.home.root, "checkout");
    for (const pkg of ["a", "b"]) mkdirSync(join(checkout, "packages", pkg), { recursive: true });
    const good = [
      { id: "a", prompt: "scenario:write a note in a", dir: "packages/a" },
      { id: "b", prompt: "scenario:write a note in b", dir: "packages/b" },
    ];
    const before = e2e.server.requests.length;
    const file = tasksFile("dirs.jsonl", [
      ...good,
      { id: "none", prompt: "scenario:plain none", dir: "packages/none" },
    ]);
    const missing = await batch(["batch", file, "--dir", checkout]);
    expect(missing.code).toBe(5);
    expect(missing.events.map((e) => e.type)).toEqual(["batch.result"]);
    expect(missing.summary.problems).toEqual([`${file}:3: dir ${join(checkout, "packages", "none")} does not exist`]);
    expect(e2e.server.requests.length).toBe(before);
    const run = await batch(["batch", tasksFile("dirs.jsonl", good), "--dir", checkout]);
    expect(run.code).toBe(0);
    expect(classes(run.summary)).toEqual({ a: "success", b: "success" });
    for (const pkg of ["a", "b"]) {
      const started = run.events.find((e) => e.type === "run.started" && e.task_id === pkg);
      expect(started).toMatchObject({ cwd: join(checkout, "packages", pkg) });
      expect(readFileSync(join(checkout, "packages", pkg, "notes.txt"), "utf8")).toBe("hello\n");
      expect(resultOf(run, pkg)?.files_changed).toEqual([{ path: "notes.txt", change: "added" }]);
    }
    await expectNothingLeft();
  });

  it("a malformed tasks file: every problem with its line, exit 5, nothing runs", async () => {
    const file = join(e2e.home.root, "bad.jsonl");
    writeFileSync(file, '{"id":"a","prompt":"x"}\n{"id":"a","prompt":"y"}\nnot json\n{"id":"b"}\n');
    const before = e2e.server.requests.length;
    const stepSummary = join(e2e.home.root, "bad-step-summary.md");
    const run = await batch(["batch", file, "--shard", "1/2"], { env: { GITHUB_STEP_SUMMARY: stepSummary } });
    expect(run.code).toBe(5);
    expect(run.stderr).toContain(`${file}:2: duplicate id "a" (first on line 1)`);
    expect(run.stderr).toContain(`${file}:3: not JSON`);
    expect(run.stderr).toContain(`${file}:4: prompt:`);
    expect(e2e.server.requests.length).toBe(before);
    // stdout still ends with the summary, which names every problem: merge and scripts learn why.
    expect(run.events.map((e) => e.type)).toEqual(["batch.result"]);
    expect(run.summary).toMatchObject({ ok: false, exit_code: 5, tasks: [], shard: { index: 1, count: 2 } });
    expect(run.summary.problems).toEqual([
      `${file}:2: duplicate id "a" (first on line 1)`,
      expect.stringMatching(new RegExp(`^${file}:3: not JSON`)),
      expect.stringMatching(new RegExp(`^${file}:4: prompt:`)),
    ]);
    expect(readFileSync(stepSummary, "utf8")).toContain("the batch could not run");
  });

  it("a batch that cannot start, by a bad flag or a missing file: exit 5, the reason on stderr and in batch.result", async () => {
    const ok = tasksFile("never-run.jsonl", [{ id: "a", prompt: "scenario:plain never" }]);
    for (const [args, problem] of [
      [["batch", join(e2e.home.root, "none.jsonl")], `cannot read ${join(e2e.home.root, "none.jsonl")}: ENOENT`],
      [["batch", ok, "--concurrency", "0"], '--concurrency takes a whole number ≥ 1, not "0"'],
      [["batch", ok, "--shard", "4/3"], '--shard takes i/n with 1 <= i <= n, not "4/3"'],
      [["batch", ok, "--frobnicate"], "unknown option '--frobnicate'"],
      [["merge"], "missing required argument 'files'"],
    ] as const) {
      const run = await batch([...args]);
      expect(run.code, args.join(" ")).toBe(5);
      expect(run.stderr).toContain(problem);
      expect(run.events.map((e) => e.type)).toEqual(["batch.result"]);
      expect(run.summary.problems).toEqual([problem]);
    }
  });

  it("the batch budget: the running task stops as a budget stops a turn, pending tasks are not run; exit 6", async () => {
    const file = tasksFile(
      "budget.jsonl",
      Array.from({ length: 6 }, (_, i) => ({ id: `t${i + 1}`, prompt: `scenario:plain budget ${i + 1}` })),
    );
    // Each plain turn uses 128 tokens: the third crosses 300.
    const run = await batch(["batch", file, "--concurrency", "1", "--max-tokens", "300"]);
    expect(run.code).toBe(6);
    expect(run.summary.exit_code).toBe(6);
    const byId = Object.fromEntries(run.summary.tasks.map((t) => [t.id, [t.class, t.run]]));
    expect(byId).toMatchObject({ t1: ["success", "ran"], t2: ["success", "ran"] });
    expect(byId.t3).toEqual(["budget_exceeded", "ran"]);
    expect(resultOf(run, "t3")?.error?.message).toBe(
      "the batch's --max-tokens 300 was crossed: the batch used 384; oc-exec stopped this turn",
    );
    for (const id of ["t4", "t5", "t6"]) {
      expect(byId[id]).toEqual(["budget_exceeded", "not_run"]);
      expect(resultOf(run, id)?.error).toMatchObject({
        name: "NotRun",
        message: "the batch budget (--max-tokens 300) was crossed before this task started",
      });
    }
    await expectNothingLeft();
  });

  it("every problem of the tasks file at once: a line that is not JSON, a budget of 0, a missing file and dir; nothing runs", async () => {
    const file = join(e2e.home.root, "all-problems.jsonl");
    writeFileSync(
      file,
      [
        '{"id":"a","prompt":"scenario:plain all-problems"',
        JSON.stringify({ id: "b", prompt: "scenario:plain all-problems", max_steps: 0 }),
        JSON.stringify({ id: "c", prompt: "scenario:plain all-problems", files: ["nope.txt"] }),
        JSON.stringify({ id: "d", prompt: "scenario:plain all-problems", dir: "nodir" }),
        JSON.stringify({ id: "e", prompt: "scenario:plain all-problems" }),
      ].join("\n"),
    );
    const run = await batch(["batch", file]);
    expect(run.code).toBe(5);
    const ws = e2e.home.workspace;
    expect(run.summary.problems).toEqual([
      expect.stringMatching(/^.*all-problems\.jsonl:1: not JSON /),
      `${file}:2: max_steps must be more than 0: a budget of 0 would stop the work before it starts (leave it out for no limit)`,
      `${file}:3: files ${join(ws, "nope.txt")} does not exist`,
      `${file}:4: dir ${join(ws, "nodir")} does not exist`,
    ]);
    expect(e2e.requestsFor("all-problems")).toEqual([]);
  });

  it("--resume: a re-run runs only what did not succeed, and reports the rest as skipped", async () => {
    const file = tasksFile("resume.jsonl", [
      { id: "ok-1", prompt: "scenario:plain resume-ok-1" },
      { id: "fails", prompt: "scenario:http-401 resume-fails" },
      { id: "ok-2", prompt: "scenario:plain resume-ok-2" },
    ]);
    const first = await batch(["batch", file]);
    expect(first.code).toBe(1);
    const previous = join(e2e.home.root, "first.jsonl");
    writeFileSync(previous, first.stdout);
    const okRequests = e2e.requestsFor("resume-ok-").length;
    const failRequests = e2e.requestsFor("resume-fails").length;
    const again = await batch(["batch", file, "--resume", previous]);
    expect(again.code).toBe(1);
    expect(e2e.requestsFor("resume-ok-").length).toBe(okRequests);
    expect(e2e.requestsFor("resume-fails").length).toBeGreaterThan(failRequests);
    expect(again.summary.tasks.map((t) => [t.id, t.class, t.run])).toEqual([
      ["ok-1", "success", "skipped"],
      ["fails", "api_error", "ran"],
      ["ok-2", "success", "skipped"],
    ]);
    // Only "fails" started again: the others' run.started lines are the first run's, carried.
    const started = (run: BatchRun) => run.events.filter((e) => e.type === "run.started");
    const fresh = started(again).filter((e) => !started(first).some((f) => JSON.stringify(f) === JSON.stringify(e)));
    expect(fresh.map((e) => e.task_id)).toEqual(["fails"]);
    // What succeeded before is carried into the new stream: every task's answer is there, and the
    // totals count them (a shard re-run whose artifact replaced the first attempt's lost both).
    for (const id of ["ok-1", "ok-2"]) expect(resultOf(again, id)).toEqual(resultOf(first, id));
    const results = again.events.filter((e): e is ResultEvent => e.type === "result");
    expect(results.map((r) => r.task_id).sort()).toEqual(["fails", "ok-1", "ok-2"]);
    expect(again.summary.usage.total).toBe(results.reduce((n, r) => n + r.usage.total, 0));
    expect(again.summary.cost_usd).toBeCloseTo(
      results.reduce((n, r) => n + r.cost_usd, 0),
      10,
    );
    // A task whose line changed since then is not what succeeded: it runs again, and says so.
    const edited = tasksFile("resume.jsonl", [
      { id: "ok-1", prompt: "scenario:plain resume-ok-1" },
      { id: "fails", prompt: "scenario:http-401 resume-fails" },
      { id: "ok-2", prompt: "scenario:plain resume-ok-2, now in French" },
    ]);
    const third = await batch(["batch", edited, "--resume", previous]);
    expect(third.code).toBe(1);
    expect(third.stderr).toContain("task ok-2 changed since the --resume stream (its line differs): it runs again");
    expect(third.summary.tasks.map((t) => [t.id, t.class, t.run])).toEqual([
      ["ok-1", "success", "skipped"],
      ["fails", "api_error", "ran"],
      ["ok-2", "success", "ran"],
    ]);
    expect(e2e.requestsFor("now in French").length).toBeGreaterThan(0);
    const digests = Object.fromEntries(third.summary.tasks.map((t) => [t.id, t.digest]));
    expect(digests["ok-1"]).toBe(first.summary.tasks[0]!.digest);
    expect(digests["ok-2"]).not.toBe(first.summary.tasks[2]!.digest);
    expect(resultOf(third, "ok-2")?.task_digest).toBe(digests["ok-2"]);
    // The resume file as the new stream's stdout: the shell empties it first, and an empty stream
    // says nothing succeeded. Refused before anything runs; the earlier stream is still lost to the
    // shell, but no task is paid for twice.
    const requestsBefore = e2e.requestsFor("resume-").length;
    const same = await runBash(
      [],
      `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} batch ${JSON.stringify(file)} --resume first.jsonl > first.jsonl`,
      { cwd: e2e.home.root, env: e2e.home.env },
    );
    expect(same.code).toBe(5);
    expect(same.stderr).toContain(
      "oc-exec batch: --resume first.jsonl is also this batch's stdout: the shell empties it for > before oc-exec can read what succeeded",
    );
    expect(e2e.requestsFor("resume-").length).toBe(requestsBefore);
    expect(JSON.parse(readFileSync(previous, "utf8").trim())).toMatchObject({
      type: "batch.result",
      exit_code: 5,
      tasks: [],
    });
    await expectNothingLeft();
  });

  it("Ctrl-C mid-batch: running tasks interrupted, pending not run, summary written, server gone; exit 130", async () => {
    const file = tasksFile(
      "sleepy.jsonl",
      Array.from({ length: 4 }, (_, i) => ({ id: `s${i + 1}`, prompt: "scenario:sleep-tool sleep", auto: true })),
    );
    const run = await batch(["batch", file, "--concurrency", "2"], {
      onSpawn: (child) => {
        void waitFor(
          () => descendants(child.pid!).filter((p) => p.cmdline === "sleep 300").length === 2,
          60_000,
          "two tools running",
        ).then(() => child.kill("SIGINT"));
      },
    });
    expect(run.code).toBe(130);
    expect(run.summary.exit_code).toBe(130);
    expect(run.summary.tasks.map((t) => [t.class, t.run])).toEqual([
      ["interrupted", "ran"],
      ["interrupted", "ran"],
      ["interrupted", "not_run"],
      ["interrupted", "not_run"],
    ]);
    await expectNothingLeft();
  });

  it("kill -9 of the batch mid-task: its own server stops with it, tools included, within seconds", async () => {
    const file = tasksFile("killed.jsonl", [{ id: "k1", prompt: "scenario:sleep-tool killed", auto: true }]);
    const child = spawn(process.execPath, [BIN, "batch", file, "-q"], {
      env: e2e.home.env,
      cwd: e2e.home.workspace,
      stdio: ["ignore", "ignore", "ignore"],
    });
    const record = await waitFor(() => readRecords(e2e.home.env.XDG_STATE_HOME!)[0], 60_000, "the batch's server");
    await waitFor(
      () => descendants(record.pid).filter((p) => p.cmdline === "sleep 300").length === 1,
      60_000,
      "the task's tool",
    );
    const tools = descendants(record.pid).map((p) => p.pid);
    child.kill("SIGKILL");
    await waitFor(
      () => [record.pid, record.supervisor_pid, ...tools].every((p) => !isAlive(p)),
      15_000,
      "the killed batch's server and its tools to stop",
    );
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!)).toEqual([]);
  }, 90_000);
});

describe("shards and merge", () => {
  const TASKS = Array.from({ length: 8 }, (_, i) => ({
    id: `task-${i + 1}`,
    prompt: i % 3 === 2 ? `scenario:http-401 shard ${i}` : `scenario:plain shard ${i}`,
  }));

  it("shards run as separate processes and merged equal the unsharded run, task by task; a missing shard is named", async () => {
    const file = tasksFile("sharded.jsonl", TASKS);
    const whole = await batch(["batch", file, "-q"]);
    // One after another, as separate processes: three opencode servers at once would crowd two cores.
    const shards: BatchRun[] = [];
    for (const i of [1, 2, 3]) shards.push(await batch(["batch", file, "-q", "--shard", `${i}/3`]));
    const outputs = shards.map((s, i) => {
      const out = join(e2e.home.root, `shard-${i + 1}.jsonl`);
      writeFileSync(out, s.stdout);
      expect(s.summary.shard).toEqual({ index: i + 1, count: 3 });
      return out;
    });
    // Every task lands in exactly one shard, the same one on every run.
    const ids = shards.flatMap((s) => s.summary.tasks.map((t) => t.id));
    expect(ids.sort()).toEqual(TASKS.map((t) => t.id).sort());
    const again = await batch(["batch", file, "-q", "--shard", "1/3"]);
    expect(again.summary.tasks.map((t) => t.id)).toEqual(shards[0]!.summary.tasks.map((t) => t.id));

    const summaryFile = join(e2e.home.root, "step-summary.md");
    const merged = await batch(["merge", "--tasks", file, ...outputs], { env: { GITHUB_STEP_SUMMARY: summaryFile } });
    expect(merged.code).toBe(whole.code);
    expect(merged.code).toBe(1);
    expect(merged.summary.tasks.map((t) => [t.id, t.class, t.exit_code])).toEqual(
      whole.summary.tasks.map((t) => [t.id, t.class, t.exit_code]),
    );
    expect(merged.summary.counts).toEqual(whole.summary.counts);
    expect(merged.summary.problems).toEqual([]);
    expect(readFileSync(summaryFile, "utf8")).toContain("| task-3 | api_error | 4 | ran |");

    const incomplete = await batch(["merge", "--tasks", file, outputs[0]!, outputs[2]!]);
    expect(incomplete.code).toBe(5);
    expect(incomplete.summary.problems).toContain("shard 2/3 is missing");
    for (const t of shards[1]!.summary.tasks) expect(incomplete.summary.problems).toContain(`task ${t.id} is missing`);
    // A shard that could not run, a file cut off, a file that is not there: named, and the rest merged.
    const failedShard = join(e2e.home.root, "shard-failed.jsonl");
    writeFileSync(failedShard, (await batch(["batch", file, "-q", "--shard", "2/3", "--concurrency", "0"])).stdout);
    const cut = join(e2e.home.root, "shard-cut.jsonl");
    writeFileSync(cut, `${readFileSync(outputs[2]!, "utf8")}{"type":"res`);
    const broken = await batch(["merge", "--tasks", file, outputs[0]!, failedShard, cut, "/nonexistent.jsonl"]);
    expect(broken.code).toBe(5);
    const lines = readFileSync(cut, "utf8").split("\n").length;
    expect(broken.summary.problems).toEqual(
      expect.arrayContaining([
        `${failedShard}: --concurrency takes a whole number ≥ 1, not "0"`,
        `${cut}:${lines}: not JSON: {"type":"res`,
        "cannot read /nonexistent.jsonl: ENOENT",
      ]),
    );
    const mergedIds = broken.summary.tasks.map((t) => t.id);
    expect(mergedIds.sort()).toEqual(
      [...shards[0]!.summary.tasks, ...shards[2]!.summary.tasks].map((t) => t.id).sort(),
    );
    for (const t of shards[1]!.summary.tasks) expect(broken.summary.problems).toContain(`task ${t.id} is missing`);

    const doubled = await batch(["merge", outputs[0]!, outputs[0]!, outputs[1]!, outputs[2]!]);
    expect(doubled.code).toBe(5);
    expect(doubled.summary.problems.some((p) => p.startsWith("shard 1 appears twice"))).toBe(true);
    expect(doubled.summary.problems.filter((p) => p.includes("appears twice: in"))).toHaveLength(
      shards[0]!.summary.tasks.length,
    );
    await expectNothingLeft();
  }, 300_000);
});
