// batch --resume carries what succeeded into the new stream: each skipped task's events once, from
// its last run in the earlier stream (a pod's stream may hold several attempts appended).
import { describe, expect, it } from "vitest";
import { carriedEvents } from "../../src/app/batch/resume.js";

const line = (type: string, task: string, extra: object = {}) =>
  JSON.stringify({ type, task_id: task, seq: 0, ...extra });

describe("carriedEvents", () => {
  it("the skipped tasks' events, from their last run; nothing of other tasks or of batch.result", () => {
    const stream = [
      line("run.started", "a", { n: 1 }),
      line("message", "a", { n: 1 }),
      line("result", "a", { n: 1 }),
      line("run.started", "b"),
      line("result", "b"),
      JSON.stringify({ type: "batch.result", tasks: [] }),
      // The next attempt's stream, appended: a carried again, b run again.
      line("run.started", "a", { n: 2 }),
      line("message", "a", { n: 2 }),
      line("result", "a", { n: 2 }),
      '{"type":"result","task_id":"a"', // cut off
    ].join("\n");
    expect(carriedEvents(stream, new Set(["a"])).map((e) => [e.type, (e as { n?: number }).n])).toEqual([
      ["run.started", 2],
      ["message", 2],
      ["result", 2],
    ]);
    expect(carriedEvents(stream, new Set())).toEqual([]);
  });
});
