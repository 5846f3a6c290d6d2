// The pure parts of what a CI author hit in their first hour (issue "A CI author's first hour").
import { describe, expect, it } from "vitest";
import { mergeStreams } from "../../src/app/batch/merge.js";
import { resumeProblem } from "../../src/app/batch/resume.js";
import { writeBatchResult } from "../../src/app/batch/summary.js";
import { parseTasks } from "../../src/app/batch/tasks.js";
import { capProblems, printable } from "../../src/domain/output/printable.js";
import { batchSummaryMarkdown } from "../../src/domain/progress/step-summary.js";
import { batchResultOf } from "../support/batch-result.js";

const { tasks } = parseTasks(['{"id":"a","prompt":"x"}', '{"id":"b","prompt":"y"}'].join("\n"));

describe("--resume is checked before anything runs", () => {
  it("a file that is not an oc-exec batch stream, or one of other tasks, is refused, naming the file", () => {
    expect(resumeProblem("\u0000\u0001garbage\nmore garbage\n", "garbage.bin", tasks)).toBe(
      "--resume garbage.bin is not an oc-exec batch stream: none of its 2 line(s) is a batch event (an event with task_id, or batch.result); nothing was run",
    );
    const single = JSON.stringify({ type: "result", seq: 5, class: "success" });
    expect(resumeProblem(`${single}\n`, "turn.jsonl", tasks)).toMatch(
      /^--resume turn.jsonl is not an oc-exec batch stream/,
    );
    const other = JSON.stringify({ type: "result", seq: 5, task_id: "zzz", class: "success" });
    expect(resumeProblem(`${other}\n`, "other.jsonl", tasks)).toBe(
      "--resume other.jsonl is the stream of other tasks: none of its task ids (zzz) is in the tasks file; nothing was run",
    );
  });

  it("a stream of these tasks, even cut off mid-line, and an empty file (an earlier run that wrote nothing) are accepted", () => {
    const mine = JSON.stringify({ type: "result", seq: 5, task_id: "a", class: "success" });
    expect(resumeProblem(`${mine}\n{"type":"run.sta`, "earlier.jsonl", tasks)).toBeNull();
    expect(resumeProblem("", "empty.jsonl", tasks)).toBeNull();
  });
});

describe("bounded, honest output", () => {
  it("control characters and lone surrogates are shown escaped; problems are capped, the rest counted", () => {
    expect(printable("a\u001b[2Jb\u0000c\ud800d\ne\tf")).toBe("a\\u001b[2Jb\\u0000c\\ud800d\ne\tf");
    const capped = capProblems(Array.from({ length: 3938 }, (_, i) => `line ${i + 1}: not JSON \u001b[31m`));
    expect(capped).toHaveLength(21);
    expect(capped[0]).toBe("line 1: not JSON \\u001b[31m");
    expect(capped.at(-1)).toBe("… and 3918 more problem(s), not listed");
  });

  const summary = batchResultOf;

  it("the step summary: a heading that agrees with the exit, why each task failed, no empty table, escaped cells", () => {
    const missing = batchSummaryMarkdown(
      summary({
        exit_code: 5,
        problems: ["shard 2/2 is missing"],
        tasks: [
          {
            id: "a|\u001b",
            class: "api_error",
            exit_code: 4,
            cost_usd: 0,
            duration_ms: 5,
            run: "ran",
            error: { name: "APIError", message: "Rate limit reached\nsecond line" },
          },
        ],
      }),
    );
    expect(missing).toContain("### oc-exec batch: the batch is not complete");
    expect(missing).toContain("| a\\|\\u001b | api_error | 4 | ran | 5ms | $0.0000 | APIError: Rate limit reached |");
    const nothing = batchSummaryMarkdown(summary({ exit_code: 5, problems: ["x"] }));
    expect(nothing).toContain("the batch could not run");
    expect(nothing).not.toContain("| task |");
  });

  it("stays far under GitHub's 1 MiB a step, however many tasks, saying how many it left out", () => {
    const tasks = Array.from({ length: 20_000 }, (_, i) => ({
      id: `task-${i}-${"x".repeat(40)}`,
      class: "agent_error" as const,
      exit_code: 1,
      cost_usd: 0,
      duration_ms: 1,
      run: "ran" as const,
      error: { name: "StreamEnded", message: "y".repeat(300) },
    }));
    const markdown = batchSummaryMarkdown(summary({ tasks }));
    expect(markdown.length).toBeLessThan(210_000);
    expect(markdown).toMatch(/\| … \| \d+ more task\(s\), not listed: the stream has them all/);
  });
});

describe("merge: why each task failed, also from shard streams older than tasks[].error", () => {
  it("a task outcome without `error` takes it from the task's own result event; one with it keeps it", () => {
    const old = (id: string, error: { name: string; message: string } | null) =>
      [
        JSON.stringify({ type: "result", seq: 3, task_id: id, class: error ? "api_error" : "success", error }),
        JSON.stringify(
          batchResultOf({
            shard: { index: id === "a" ? 1 : 2, count: 2 },
            tasks: [
              {
                id,
                class: error ? "api_error" : "success",
                exit_code: error ? 4 : 0,
                cost_usd: 0,
                duration_ms: 1,
                run: "ran",
              },
            ],
          }),
        ),
      ].join("\n");
    const { end } = mergeStreams(
      [
        { file: "s1.jsonl", text: old("a", { name: "APIError", message: "Rate limit reached" }) },
        { file: "s2.jsonl", text: old("b", null) },
      ],
      null,
    );
    expect(end.tasks.map((t) => [t.id, t.error])).toEqual([
      ["a", { name: "APIError", message: "Rate limit reached" }],
      ["b", undefined],
    ]);
    expect(batchSummaryMarkdown(writeBatchResult(end, () => {}))).toContain("| APIError: Rate limit reached |");
  });
});
