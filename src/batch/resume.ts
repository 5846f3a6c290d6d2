// `batch --resume FILE`: the tasks that succeeded in an earlier batch stream, with the digest of
// their line then; a task whose line changed since runs again. Pure: the stream's text in.
import type { OcEvent, TaskOutcome } from "../contract/schema.js";
import type { Task } from "./tasks.js";

/** Tasks whose result in an earlier batch stream was success. */
export function succeededIn(text: string): Map<string, TaskOutcome> {
  const done = new Map<string, TaskOutcome>();
  for (const line of text.split("\n")) {
    if (!line.includes('"result"')) continue;
    try {
      const event = JSON.parse(line) as OcEvent;
      if (event.type === "result" && event.task_id !== undefined && event.class === "success")
        done.set(event.task_id, {
          id: event.task_id,
          class: "success",
          exit_code: 0,
          cost_usd: event.cost_usd,
          duration_ms: event.duration_ms,
          ...(event.task_digest === undefined ? {} : { digest: event.task_digest }),
          run: "skipped",
        });
      if (event.type === "batch.result")
        for (const t of event.tasks) if (t.class === "success") done.set(t.id, { ...t, run: "skipped" });
    } catch {
      // A line cut off by the interruption that made the re-run necessary.
    }
  }
  return done;
}

/**
 * The tasks to skip: those that succeeded before and are still the same task. A stream from before
 * digests were written has none: there the id alone decides. Returns the ids that changed too.
 */
export function tasksToSkip(
  before: Map<string, TaskOutcome>,
  tasks: Task[],
): { skipped: Map<string, TaskOutcome>; changed: string[] } {
  const skipped = new Map<string, TaskOutcome>();
  const changed: string[] = [];
  for (const task of tasks) {
    const earlier = before.get(task.id);
    if (!earlier) continue;
    if (earlier.digest !== undefined && earlier.digest !== task.digest) changed.push(task.id);
    else skipped.set(task.id, earlier);
  }
  return { skipped, changed };
}
