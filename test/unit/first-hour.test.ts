// The pure parts of what a CI author hit in their first hour (issue "A CI author's first hour").
import { describe, expect, it } from "vitest";
import { resumeProblem } from "../../src/batch/resume.js";
import { parseTasks } from "../../src/batch/tasks.js";

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
