// `batch --resume FILE`: the tasks that succeeded in an earlier batch stream, with the digest of
// their line then; a task whose line changed since runs again. Pure: the stream's text in.
import type { OcEvent, TaskOutcome } from "../../contract/schema.js";
import type { Task } from "./tasks.js";

/**
 * Why a --resume stream cannot be trusted to say what succeeded, or null when it can: it must be an
 * oc-exec batch stream (lines marked with task_id, or a batch.result), and of these tasks (at least one
 * of its task ids is in the tasks file). An empty file is an earlier run that wrote nothing: no task
 * succeeded there. Re-running every task of a file mistaken for the earlier run would pay for all.
 */
export function resumeProblem(text: string, file: string, tasks: Task[]): string | null {
  if (text.trim() === "") return null;
  const ids = new Set<string>();
  let batchLines = 0;
  let lines = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    lines++;
    try {
      const event = JSON.parse(line) as Partial<OcEvent> | null;
      if (event === null || typeof event !== "object" || typeof event.type !== "string") continue;
      if (event.type === "batch.result") {
        batchLines++;
        for (const t of (event as { tasks?: { id?: unknown }[] }).tasks ?? [])
          if (typeof t.id === "string") ids.add(t.id);
      } else if (typeof event.task_id === "string") {
        batchLines++;
        ids.add(event.task_id);
      }
    } catch {
      // Not JSON: counted, never trusted.
    }
  }
  if (batchLines === 0)
    return `--resume ${file} is not an oc-exec batch stream: none of its ${lines} line(s) is a batch event (an event with task_id, or batch.result); nothing was run`;
  const known = new Set(tasks.map((t) => t.id));
  if (ids.size > 0 && ![...ids].some((id) => known.has(id))) {
    const shown = [...ids].slice(0, 5).join(", ");
    return `--resume ${file} is the stream of other tasks: none of its task ids (${shown}${ids.size > 5 ? ", …" : ""}) is in the tasks file; nothing was run`;
  }
  return null;
}

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

/**
 * The events of the skipped tasks in the earlier stream, in order: carried into the new stream, so
 * that it holds every task's answer and the batch's totals on its own (a shard re-run whose artifact
 * replaces the first attempt's lost them), and a later --resume or merge finds them there too.
 */
export function carriedEvents(text: string, skipped: ReadonlySet<string>): OcEvent[] {
  // A task's events from its last run in the stream: a stream made of several attempts (a pod's
  // earlier streams appended) holds a task more than once; carried once, a merge counts it once.
  const runs = new Map<string, OcEvent[]>();
  if (skipped.size === 0) return [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const event = JSON.parse(line) as OcEvent;
      if (event.type === "batch.result" || event.task_id === undefined || !skipped.has(event.task_id)) continue;
      if (event.type === "run.started" || !runs.has(event.task_id)) runs.set(event.task_id, []);
      runs.get(event.task_id)!.push(event);
    } catch {
      // Cut off, as above.
    }
  }
  return [...runs.values()].flat();
}
