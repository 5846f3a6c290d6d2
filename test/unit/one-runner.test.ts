// The one runner of many turns and the one rule for limits, without a process: a fake backend
// behind the seam (engine/backend.ts) plays opencode's lines, so the runner, the budget checker,
// the exit ladder, the option labels and the seq rule are checked exactly.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planTasks, serverGroups } from "../../src/app/batch/plan.js";
import { runBatch } from "../../src/app/batch/run-batch.js";
import { writeBatchNotRun } from "../../src/app/batch/summary.js";
import { parseTasks } from "../../src/app/batch/tasks.js";
import { runConversation } from "../../src/app/run-conversation.js";
import { runTurn } from "../../src/app/run-turn.js";
import { FLAG_LABELS } from "../../src/cli/flag-table.js";
import { TASK_FLAG_LABELS } from "../../src/cli/flags.js";
import type { BatchResult, OcEvent, ResultEvent } from "../../src/contract/schema.js";
import { validateStream } from "../../src/contract/validate-stream.js";
import type { UpstreamSource } from "../../src/domain/events/upstream-source.js";
import { manyTurnsExit } from "../../src/domain/outcome/many-turns-end.js";
import type { Backend } from "../../src/engine/backend.js";
import { TurnControl } from "../../src/engine/control.js";
import { resolveTurnOptions, resolveWholeLimits } from "../../src/plan/resolve-options.js";
import { batchResultOf } from "../support/batch-result.js";

/** opencode's lines for one step of `tokens` input tokens at `cost` dollars, answering `text`. */
const stepLines = (session: string, text: string, tokens: number, cost: number) => [
  { type: "step_start", sessionID: session, part: { type: "step-start", messageID: "m1", id: "p1" } },
  { type: "text", sessionID: session, part: { type: "text", text, time: { start: 1, end: 2 } } },
  {
    type: "step_finish",
    sessionID: session,
    part: {
      type: "step-finish",
      reason: "stop",
      tokens: { total: tokens, input: tokens, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
      cost,
    },
  },
];

/** A backend made once that plays each turn from a script, and counts what it was asked. */
function fakeBackend(tokensPerTurn = 100, costPerTurn = 0.1): Backend & { opened: string[] } {
  const opened: string[] = [];
  return {
    opened,
    opencode: { path: "/fake/opencode", version: "1.18.33" },
    problem: null,
    check: () => ({ problem: null, warnings: [] }),
    async open(turn, input) {
      opened.push(input.prompt);
      const session = turn.session.id ?? `ses_${opened.length}`;
      const source: UpstreamSource = {
        start(sink) {
          const done = (async () => {
            for (const line of stepLines(session, `answer to ${input.prompt}`, tokensPerTurn, costPerTurn)) {
              const text = JSON.stringify({ ...line, timestamp: 1 });
              sink.eventLine({ text, truncated: false, cut: false, bytes: text.length });
              await new Promise((r) => setImmediate(r));
            }
            return { process: { exitCode: 0, signal: null }, failure: null, lost: null };
          })();
          return { done, stop() {}, hold() {} };
        },
      };
      return {
        source,
        ops: { export: null, delete: async () => true as const, sessionId: null },
      };
    },
  };
}

const BATCH_LABELS = TASK_FLAG_LABELS;
const NAMES = { steps: "--max-steps", tokens: "--max-tokens", cost_usd: "--max-cost-usd", timeout: "--timeout" };

describe("the rule for 0, on every path", () => {
  it("a turn: a budget of 0 is a usage error named as the caller names it; a duration of 0 is off", () => {
    expect(() => resolveTurnOptions({ prompt: "x", maxSteps: 0 }, { labels: FLAG_LABELS })).toThrow(
      /^--max-steps must be more than 0: a budget of 0 would stop the work before it starts \(leave it out for no limit\)$/,
    );
    expect(() => resolveTurnOptions({ prompt: "x", maxTokens: 0 })).toThrow(/^maxTokens must be more than 0/);
    expect(() => resolveTurnOptions({ prompt: "x", maxCostUsd: 0 })).toThrow(/^maxCostUsd must be more than 0/);
    const off = resolveTurnOptions({ prompt: "x", timeoutMs: 0, idleTimeoutMs: 0, startupTimeoutMs: 0 });
    expect([off.turn.timeout, off.turn.idleTimeout, off.placement.startupTimeout]).toEqual([null, null, null]);
  });

  it("the library: maxSteps 0 ends in a config_error result naming the option, before any backend", async () => {
    const events: OcEvent[] = [];
    for await (const event of runTurn({ prompt: "x", maxSteps: 0, opencode: "/nonexistent" })) events.push(event);
    expect(events.map((e) => e.type)).toEqual(["run.started", "result"]);
    expect(events[1]).toMatchObject({
      class: "config_error",
      exit_code: 5,
      error: { name: "UsageError", message: expect.stringMatching(/^maxSteps must be more than 0/) },
    });
  });

  it("a batch task: its own field named (max_steps), else the flag that gave the default (--task-max-cost-usd)", () => {
    const { tasks } = parseTasks(['{"id":"a","prompt":"x","max_steps":0}', '{"id":"b","prompt":"y"}'].join("\n"));
    const planned = planTasks(tasks, { dir: process.cwd(), maxCostUsd: 0 }, BATCH_LABELS);
    expect(planned.run).toEqual([]);
    expect(planned.problems).toEqual([
      { line: 1, message: expect.stringMatching(/^max_steps must be more than 0/) },
      { line: 2, message: expect.stringMatching(/^--task-max-cost-usd must be more than 0/) },
    ]);
  });

  it("a batch's and a conversation's own limits: a budget of 0 is a usage error; a timeout of 0 is off", () => {
    expect(() => resolveWholeLimits("batch", { maxCostUsd: 0 }, NAMES)).toThrow(/^--max-cost-usd must be more than 0/);
    expect(() => resolveWholeLimits("conversation", { maxSteps: 0 }, NAMES)).toThrow(
      /^--max-steps must be more than 0/,
    );
    expect(resolveWholeLimits("conversation", { timeoutMs: 0, maxTokens: 5 }, NAMES)).toEqual({
      scope: "conversation",
      budgets: {
        limits: { steps: null, tokens: 5, cost_usd: null },
        names: { steps: "--max-steps", tokens: "--max-tokens", cost_usd: "--max-cost-usd" },
      },
      timeout: null,
    });
    expect(resolveWholeLimits("batch", { timeoutMs: 5000 }, NAMES).timeout).toEqual({ ms: 5000, option: "--timeout" });
  });
});

describe("a task's limits are named by where they came from", () => {
  it("max_cost_usd when the line sets it, --task-max-cost-usd when the flag gave it", () => {
    const { tasks } = parseTasks(['{"id":"a","prompt":"x","max_cost_usd":0.5}', '{"id":"b","prompt":"y"}'].join("\n"));
    const { run } = planTasks(tasks, { dir: process.cwd(), maxCostUsd: 1 }, BATCH_LABELS);
    expect(
      run.map((t) => [t.task.id, t.options.turn.budgets.limits.cost_usd, t.options.turn.budgets.names.cost_usd]),
    ).toEqual([
      ["a", 0.5, "max_cost_usd"],
      ["b", 1, "--task-max-cost-usd"],
    ]);
  });
});

describe("a batch's sandbox policies: one server each", () => {
  it("tasks group by their sandbox (their own fields, else the batch's), with the models each group uses", () => {
    const lines = [
      { id: "a", prompt: "x" },
      { id: "b", prompt: "x", sandbox: "off" },
      { id: "c", prompt: "x", model: "p/m2" },
      { id: "d", prompt: "x", sandbox: "workspace-write", writable: ["out"], allow_hosts: ["h", "g"] },
      { id: "e", prompt: "x", sandbox: "workspace-write", writable: ["out"], allow_hosts: ["g", "h"] },
    ];
    const { tasks, problems } = parseTasks(lines.map((l) => JSON.stringify(l)).join("\n"));
    expect(problems).toEqual([]);
    const ws = process.cwd();
    const planned = planTasks(tasks, { dir: ws, sandbox: "read-only", model: "p/m1" }, BATCH_LABELS);
    expect(planned.problems).toEqual([]);
    const groups = serverGroups(planned.run);
    expect(
      groups.map((g) => [g.sandbox?.mode ?? "off", g.sandbox?.writable, g.models, g.tasks.map((t) => t.task.id)]),
    ).toEqual([
      ["read-only", [], ["p/m1", "p/m2"], ["a", "c"]],
      ["off", undefined, ["p/m1"], ["b"]],
      ["workspace-write", [`${ws}/out`], ["p/m1"], ["d", "e"]],
    ]);
  });

  it("tasks naming an ssh host: one server per host and directory there, paths there kept as written", () => {
    const lines = [
      { id: "here", prompt: "x", dir: "sub", files: ["a.md"] },
      { id: "a1", prompt: "x", ssh: "build-a", dir: "/srv/app", files: ["notes.md"] },
      { id: "b1", prompt: "x", ssh: "me@build-b:2222" },
      { id: "a2", prompt: "x", ssh: "build-a", dir: "/srv/app" },
      { id: "a3", prompt: "x", ssh: "build-a", dir: "other" },
      { id: "c1", prompt: "x", ssh: "batch-host", dir: "pkg" },
      { id: "c2", prompt: "x" },
    ];
    const { tasks } = parseTasks(lines.map((l) => JSON.stringify(l)).join("\n"));
    const ws = mkdtempSync(join(tmpdir(), "oc-exec-plan-"));
    mkdirSync(join(ws, "sub"));
    writeFileSync(join(ws, "sub", "a.md"), "notes\n");
    const here = planTasks(tasks, { dir: ws }, BATCH_LABELS);
    expect(here.problems).toEqual([]);
    const groups = serverGroups(here.run);
    expect(
      groups.map((g) => [g.ssh && [g.ssh.destination, g.ssh.dir, g.ssh.options], g.tasks.map((t) => t.task.id)]),
    ).toEqual([
      [null, ["here", "c2"]],
      [
        ["build-a", "/srv/app", []],
        ["a1", "a2"],
      ],
      [["me@build-b:2222", null, []], ["b1"]],
      [["build-a", "other", []], ["a3"]],
      [["batch-host", "pkg", []], ["c1"]],
    ]);
    const byId = new Map(here.run.map((t) => [t.task.id, t.options]));
    expect(byId.get("here")).toMatchObject({
      placement: { dir: join(ws, "sub") },
      turn: { files: { paths: [join(ws, "sub", "a.md")] } },
    });
    expect(byId.get("a1")?.turn.files.paths).toEqual(["/srv/app/notes.md"]);
    rmSync(ws, { recursive: true });
  });

  it("batch --ssh: tasks naming no host run there, their dir relative to its --dir; what cannot run there is a line's problem", () => {
    const lines = [
      { id: "rel", prompt: "x", dir: "pkg" },
      { id: "none", prompt: "x" },
      { id: "other", prompt: "x", ssh: "elsewhere", dir: "pkg" },
      { id: "boxed", prompt: "x", sandbox: "read-only" },
      { id: "checked", prompt: "x", verify: ["npm test"] },
      { id: "login-rel", prompt: "x", ssh: "elsewhere", files: ["a.md"] },
    ];
    const { tasks } = parseTasks(lines.map((l) => JSON.stringify(l)).join("\n"));
    const planned = planTasks(tasks, { dir: process.cwd() }, BATCH_LABELS, {
      ssh: "batch-host",
      sshOptions: ["Port=2200"],
      dir: "/work/repo",
    });
    expect(planned.problems).toEqual([
      { line: 4, message: "--ssh cannot be combined with a sandbox (sandbox): the sandbox runs on this machine only" },
      { line: 6, message: 'files: "a.md" on elsewhere needs an absolute path there (or the task an absolute dir)' },
    ]);
    expect(
      serverGroups(planned.run).map((g) => [
        g.ssh?.destination,
        g.ssh?.dir,
        g.ssh?.options,
        g.tasks.map((t) => t.task.id),
      ]),
    ).toEqual([
      ["batch-host", "/work/repo/pkg", ["Port=2200"], ["rel"]],
      // A task's check runs there too, over its server's ssh connection.
      ["batch-host", "/work/repo", ["Port=2200"], ["none", "checked"]],
      ["elsewhere", "pkg", ["Port=2200"], ["other"]],
    ]);
  });

  it("a task's sandbox field follows the options' rules, named by the field", () => {
    const { tasks } = parseTasks(JSON.stringify({ id: "a", prompt: "x", sandbox: "read-only", writable: ["o"] }));
    expect(planTasks(tasks, { dir: process.cwd() }, BATCH_LABELS).problems).toEqual([
      { line: 1, message: "writable needs sandbox workspace-write: read-only writes nowhere" },
    ]);
  });
});

describe("the one runner, over a backend made once", () => {
  it("a batch: every task on the one backend; a crossed batch budget stops it, pending tasks not run; exit 6", async () => {
    const backend = fakeBackend(100, 0.1);
    const { tasks } = parseTasks(["a", "b", "c", "d"].map((id) => JSON.stringify({ id, prompt: id })).join("\n"));
    const { run } = planTasks(tasks, { dir: process.cwd() }, BATCH_LABELS);
    const written: OcEvent[] = [];
    const summary: BatchResult = await runBatch(
      {
        tasks,
        run,
        skipped: new Map(),
        backend,
        concurrency: 1,
        limits: resolveWholeLimits("batch", { maxTokens: 150 }, NAMES),
        shard: null,
      },
      { write: (e) => written.push(e) },
      new TurnControl(),
    );
    expect(backend.opened).toEqual(["a", "b"]);
    expect(summary.tasks.map((t) => [t.id, t.class, t.run])).toEqual([
      ["a", "success", "ran"],
      ["b", "budget_exceeded", "ran"],
      ["c", "budget_exceeded", "not_run"],
      ["d", "budget_exceeded", "not_run"],
    ]);
    expect(summary.exit_code).toBe(6);
    const results = written.filter((e): e is ResultEvent => e.type === "result");
    expect(results.map((r) => r.error?.message ?? null)).toEqual([
      null,
      "the batch's --max-tokens 150 was crossed: the batch used 200; oc-exec stopped this turn",
      "the batch budget (--max-tokens 150) was crossed before this task started",
      "the batch budget (--max-tokens 150) was crossed before this task started",
    ]);
    expect(validateStream(written.map((e) => JSON.stringify(e))).problems).toEqual([]);
    expect(summary.seq).toBe(0);
  });

  it("a conversation: one session across turns, the whole's budget, input errors and the result in their own seq scope", async () => {
    const backend = fakeBackend(100, 0);
    async function* lines() {
      yield '"first"';
      yield "not json";
      yield '{"prompt":"second"}';
      yield '"third"';
    }
    const written: OcEvent[] = [];
    const result = await runConversation(
      {
        turn: { dir: process.cwd() },
        labels: FLAG_LABELS,
        limits: resolveWholeLimits("conversation", { maxTokens: 150 }, NAMES),
        backend,
        lines: lines(),
      },
      (e) => written.push(e),
      new TurnControl(),
    );
    // The second turn resumed the first's session; the budget stopped the conversation in it.
    expect(backend.opened).toEqual(["first", "second"]);
    expect(
      written.filter((e) => e.type === "run.started").map((e) => [e.turn, e.type === "run.started" && e.resume]),
    ).toEqual([
      [1, null],
      [2, "ses_1"],
    ]);
    expect(result).toMatchObject({ exit_code: 6, ok: false, input_errors: 1, seq: 1, session_id: "ses_1" });
    expect(written.filter((e) => e.turn === undefined).map((e) => [e.type, e.seq])).toEqual([
      ["error", 0],
      ["conversation.result", 1],
    ]);
    expect(validateStream(written.map((e) => JSON.stringify(e))).problems).toEqual([]);
  });

  it("a bug (a backend that could not be made) still ends a conversation with its result, exit 70", async () => {
    async function* lines() {
      yield '"first"';
    }
    const written: OcEvent[] = [];
    const result = await runConversation(
      {
        turn: { dir: process.cwd() },
        labels: FLAG_LABELS,
        limits: resolveWholeLimits("conversation", {}, NAMES),
        backend: Promise.reject(new Error("simulated bug while making the backend")),
        lines: lines(),
      },
      (e) => written.push(e),
      new TurnControl(),
    );
    expect(result).toMatchObject({ type: "conversation.result", ok: false, exit_code: 70, turns: [] });
    expect(written.map((e) => e.type)).toEqual(["error", "conversation.result"]);
    expect(written[0]).toMatchObject({ class: "internal_error", name: "InternalError" });
    expect((written[0] as { message: string }).message).toMatch(
      /^oc-exec failed: Error: simulated bug while making the backend\n[\s\S]*This is a bug in oc-exec; please report it\.$/,
    );
    expect(validateStream(written.map((e) => JSON.stringify(e))).problems).toEqual([]);
  });

  it("a batch stopped by a bug: exit 70, above an incomplete batch's 5", () => {
    expect(manyTurnsExit({ stop: "internal_error", incomplete: true, allSucceeded: false })).toEqual({
      ok: false,
      exitCode: 70,
    });
    const written: OcEvent[] = [];
    const summary = writeBatchNotRun(["oc-exec failed: x"], null, (e) => written.push(e), "internal_error");
    expect(summary).toMatchObject({ type: "batch.result", ok: false, exit_code: 70, problems: ["oc-exec failed: x"] });
  });

  it("validate: batch.result counts in a scope of its own, from 0", () => {
    const summary = batchResultOf({ seq: 1, exit_code: 5, problems: ["x"] });
    expect(validateStream([JSON.stringify(summary)]).problems.map((p) => p.message)).toEqual([
      "batch-level seq 1, expected 0",
    ]);
  });

  it("the one exit ladder: a signal, then an incomplete whole, then the stop, then any failure", () => {
    const cases: [Parameters<typeof manyTurnsExit>[0], number][] = [
      [{ stop: "interrupted", incomplete: true, allSucceeded: false }, 130],
      [{ stop: "budget_exceeded", incomplete: true, allSucceeded: true }, 5],
      [{ stop: "budget_exceeded", incomplete: false, allSucceeded: true }, 6],
      [{ stop: "timeout", incomplete: false, allSucceeded: false }, 124],
      [{ stop: null, incomplete: false, allSucceeded: false }, 1],
      [{ stop: null, incomplete: false, allSucceeded: true }, 0],
    ];
    for (const [end, code] of cases) expect(manyTurnsExit(end).exitCode).toBe(code);
  });
});
