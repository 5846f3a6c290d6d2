// The pure parts of many-turn runs: the tasks file, shards, conversation input lines, and the
// contract checker on batch and conversation streams.
import { describe, expect, it } from "vitest";
import { writeBatchNotRun } from "../../src/app/batch/summary.js";
import { parseShard, parseTasks, shardOf, taskDigest } from "../../src/app/batch/tasks.js";
import { parseTurnLine } from "../../src/app/run-conversation.js";
import { validateStream } from "../../src/contract/validate-stream.js";

describe("the tasks file", () => {
  it("accepts tasks, with durations, and reports every bad line with its number", () => {
    const { tasks, problems } = parseTasks(
      [
        '{"id":"a","prompt":"x","timeout":"1m30s","max_cost_usd":0.5}',
        "",
        '{"id":"a","prompt":"y"}',
        '{"id":"b","prompt":""}',
        '{"id":"c","prompt":"z","timeout":"soon"}',
        '{"id":"d","prompt":"z","extra":true}',
        "[1]",
      ].join("\n"),
    );
    expect(tasks).toEqual([
      {
        id: "a",
        prompt: "x",
        timeout: "1m30s",
        timeoutMs: 90_000,
        max_cost_usd: 0.5,
        line: 1,
        digest: taskDigest({ id: "a", prompt: "x", timeout: "1m30s", max_cost_usd: 0.5 }),
      },
    ]);
    expect(problems.map((p) => p.line)).toEqual([3, 4, 5, 6, 7]);
    expect(problems[0]!.message).toBe('duplicate id "a" (first on line 1)');
    expect(problems[2]!.message).toBe('timeout: "soon" is not a duration like 90s or 5m');
    expect(parseTasks("\n\n").problems).toEqual([{ line: 1, message: "the tasks file has no tasks" }]);
  });

  it("a task's digest: its fields in any order give the same; any changed field, a different one", () => {
    const digest = (line: string) => parseTasks(line).tasks[0]!.digest;
    const same = digest('{"id":"a","prompt":"fix it","allow":["bash"],"max_steps":3}');
    expect(same).toMatch(/^[0-9a-f]{16}$/);
    expect(digest('{"max_steps":3,"allow":["bash"],"prompt":"fix it","id":"a"}')).toBe(same);
    expect(digest(' {"id":"a", "prompt":"fix it", "allow":["bash"], "max_steps":3} ')).toBe(same);
    for (const changed of [
      '{"id":"a","prompt":"fix it now","allow":["bash"],"max_steps":3}',
      '{"id":"a","prompt":"fix it","allow":["bash"],"max_steps":4}',
      '{"id":"a","prompt":"fix it","allow":["bash","edit"],"max_steps":3}',
      '{"id":"a","prompt":"fix it","allow":["bash"],"max_steps":3,"model":"x/y"}',
    ])
      expect(digest(changed)).not.toBe(same);
  });

  it("shards: by id alone, stable, every task in exactly one shard, all shards used", () => {
    const ids = Array.from({ length: 200 }, (_, i) => `task-${i}`);
    const shards = ids.map((id) => shardOf(id, 4));
    expect(ids.map((id) => shardOf(id, 4))).toEqual(shards);
    expect(new Set(shards)).toEqual(new Set([1, 2, 3, 4]));
    for (const n of [1, 2, 3, 4]) expect(shards.filter((s) => s === n).length).toBeGreaterThan(30);
    expect(shardOf("task-0", 1)).toBe(1);
    expect(shardOf("é", 7)).toBe(shardOf("é", 7));
    expect(parseShard("2/3")).toEqual({ index: 2, count: 3 });
    for (const bad of ["0/3", "4/3", "1/0", "x", "1-2"]) expect(parseShard(bad)).toBeNull();
  });
});

describe("conversation input lines", () => {
  it("a JSON string or {prompt, files}; anything else says what is wrong", () => {
    expect(parseTurnLine('"hi"')).toEqual({ prompt: "hi" });
    expect(parseTurnLine('{"prompt":"hi","files":["a.ts"]}')).toEqual({ prompt: "hi", files: ["a.ts"] });
    expect(parseTurnLine("hi")).toMatchObject({ error: expect.stringMatching(/^not JSON/) });
    expect(parseTurnLine('{"prompt":""}')).toEqual({ error: "prompt must be a non-empty string" });
    expect(parseTurnLine('{"prompt":"x","files":"a"}')).toEqual({ error: "files must be an array of paths" });
    expect(parseTurnLine("[]")).toEqual({ error: 'expected {"prompt": "..."} or a JSON string' });
  });
});

describe("validate on many-turn streams", () => {
  const time = "2026-11-23T09:00:00.000Z";
  const started = (extra: object, seq = 0) =>
    JSON.stringify({
      type: "run.started",
      seq,
      time,
      session_id: null,
      schema_version: "1",
      oc_exec_version: "0.1.0",
      opencode: { path: null, version: null },
      cwd: "/w",
      model: null,
      agent: null,
      resume: null,
      ...extra,
    });
  const result = (extra: object, seq = 1) =>
    JSON.stringify({
      type: "result",
      seq,
      time,
      session_id: null,
      ok: true,
      exit_code: 0,
      class: "success",
      error: null,
      model: null,
      text: "x",
      usage: { input: 0, output: 0, reasoning: 0, cache_read: 0, cache_write: 0, total: 0 },
      cost_usd: 0,
      duration_ms: 1,
      steps: 1,
      tools: { total: 0, failed: 0, denied: 0 },
      files_changed: [],
      permission_denials: [],
      opencode: { exit_code: null, signal: null },
      stream: { json_lines: 1, other_lines: 0, blank_lines: 0, warnings: 0 },
      ...extra,
    });
  const batchResult = (tasks: string[]) =>
    JSON.stringify({
      type: "batch.result",
      seq: 0,
      time,
      session_id: null,
      schema_version: "1",
      ok: true,
      exit_code: 0,
      counts: { success: tasks.length },
      tasks: tasks.map((id) => ({ id, class: "success", exit_code: 0, cost_usd: 0, duration_ms: 1, run: "ran" })),
      usage: { input: 0, output: 0, reasoning: 0, cache_read: 0, cache_write: 0, total: 0 },
      cost_usd: 0,
      duration_ms: 2,
      shard: null,
      problems: [],
    });

  it("a batch: interleaved tasks, seq per task, the summary last and in agreement", () => {
    const good = [
      started({ task_id: "a" }),
      started({ task_id: "b" }),
      result({ task_id: "b" }),
      result({ task_id: "a" }),
      batchResult(["a", "b"]),
    ];
    expect(validateStream(good).problems).toEqual([]);
    const missing = [...good.slice(0, 4), batchResult(["a"])];
    expect(validateStream(missing).problems.map((p) => p.message)).toEqual([
      "task b is missing from batch.result.tasks",
    ]);
    const noSummary = good.slice(0, 4);
    expect(validateStream(noSummary).problems.map((p) => p.message)).toContain(
      "0 batch.result events, expected exactly one",
    );
    const okButFailed = JSON.stringify({ ...JSON.parse(batchResult(["a", "b"])), exit_code: 1 });
    expect(validateStream([...good.slice(0, 4), okButFailed]).problems.map((p) => p.message)).toEqual([
      "batch.result.ok is true but its exit_code is 1",
    ]);
  });

  it("a batch that could not run: one batch.result, no task, its problems, exit 5; and it validates", () => {
    const batchNotRun = (problems: string[], shard: { index: number; count: number }) =>
      writeBatchNotRun(problems, shard, () => {});
    const summary = batchNotRun(["tasks.jsonl:3: not JSON"], { index: 2, count: 3 });
    expect(summary).toMatchObject({
      type: "batch.result",
      ok: false,
      exit_code: 5,
      counts: {},
      tasks: [],
      cost_usd: 0,
      shard: { index: 2, count: 3 },
      problems: ["tasks.jsonl:3: not JSON"],
    });
    expect(validateStream([JSON.stringify(summary)]).problems).toEqual([]);
  });

  it("a conversation: seq per turn, conversation-level lines counted apart, its result last", () => {
    const convo = (turns: number[]) =>
      JSON.stringify({
        type: "conversation.result",
        seq: 1,
        time,
        session_id: null,
        schema_version: "1",
        ok: true,
        exit_code: 0,
        turns: turns.map((turn) => ({ turn, class: "success", exit_code: 0, cost_usd: 0, duration_ms: 1 })),
        input_errors: 1,
        usage: { input: 0, output: 0, reasoning: 0, cache_read: 0, cache_write: 0, total: 0 },
        cost_usd: 0,
        duration_ms: 2,
      });
    const inputError = JSON.stringify({
      type: "error",
      seq: 0,
      time,
      session_id: null,
      class: "config_error",
      name: "InputError",
      message: "input line 2: not JSON",
      status_code: null,
      retryable: null,
    });
    const good = [
      started({ turn: 1 }),
      result({ turn: 1 }),
      inputError,
      started({ turn: 2 }),
      result({ turn: 2 }),
      convo([1, 2]),
    ];
    expect(validateStream(good).problems).toEqual([]);
    expect(validateStream(good.slice(0, 5)).problems.map((p) => p.message)).toContain(
      "last event is result, not conversation.result",
    );
    expect(validateStream([...good.slice(0, 5), convo([1])]).problems.map((p) => p.message)).toContain(
      "2 turns in the stream, 1 in conversation.result",
    );
  });
});
