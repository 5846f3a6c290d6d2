// Checks an oc-exec JSONL stream against the contract: every line valid against the schema, seq
// counting from 0 with no gap within its scope (the stream of one turn; each task of a batch; each
// turn of a conversation; the lines of the batch or conversation itself, apart), run.started first,
// exactly one result per turn and it is last, and exit_code consistent with class. Used by
// `oc-exec validate` and inside the end-to-end tests.
import { EXIT_CODES } from "./exit-codes.js";
import { EventSchema, type OcEvent } from "./schema.js";

/** A problem at a line (1-based), or with the stream as a whole (line null). */
export type StreamProblem = { line: number | null; message: string };

export function validateStream(lines: string[]): { events: OcEvent[]; problems: StreamProblem[] } {
  const problems: StreamProblem[] = [];
  const events: OcEvent[] = [];
  const lineOf = new Map<OcEvent, number>();
  const body = lines.length > 0 && lines[lines.length - 1] === "" ? lines.slice(0, -1) : lines;
  body.forEach((text, index) => {
    const line = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      problems.push({ line, message: `not JSON: ${text.slice(0, 120)}` });
      return;
    }
    const parsed = EventSchema.safeParse(value);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
      problems.push({ line, message: `does not match the schema: ${issues}` });
      return;
    }
    const event = parsed.data;
    events.push(event);
    lineOf.set(event, line);
  });
  if (events.length === 0) {
    problems.push({ line: null, message: "no events" });
    return { events, problems };
  }
  if (events.some((e) => e.type === "conversation.result" || e.turn !== undefined)) {
    checkConversation(events, lineOf, body.length, problems);
    return { events, problems };
  }
  const batch = events.some((e) => e.type === "batch.result" || e.task_id !== undefined);
  if (!batch) {
    // One turn: seq counts the whole stream (in a batch it counts within each task, checked below).
    events.forEach((event, i) => {
      if (event.seq !== i) problems.push({ line: lineOf.get(event)!, message: `seq ${event.seq}, expected ${i}` });
    });
    checkTurn(events, lineOf, body.length, problems, "");
    return { events, problems };
  }
  // A batch stream: each task's events, interleaved, form a turn stream of their own; the summary is last.
  const groups = new Map<string, OcEvent[]>();
  let outer = 0;
  for (const event of events) {
    if (event.type === "batch.result") {
      // The batch's own line counts in a scope of its own, apart from every task's.
      if (event.seq !== outer)
        problems.push({ line: lineOf.get(event)!, message: `batch-level seq ${event.seq}, expected ${outer}` });
      outer++;
      continue;
    }
    if (event.task_id === undefined) {
      problems.push({ line: lineOf.get(event)!, message: `${event.type} event without task_id in a batch stream` });
      continue;
    }
    const group = groups.get(event.task_id) ?? [];
    group.push(event);
    groups.set(event.task_id, group);
  }
  for (const [id, group] of groups) {
    group.forEach((event, i) => {
      if (event.seq !== i)
        problems.push({ line: lineOf.get(event)!, message: `task ${id}: seq ${event.seq}, expected ${i}` });
    });
    checkTurn(group, lineOf, lineOf.get(group.at(-1)!)!, problems, `task ${id}: `);
  }
  const summaries = events.filter((e) => e.type === "batch.result");
  const last = events[events.length - 1]!;
  if (summaries.length !== 1)
    problems.push({ line: null, message: `${summaries.length} batch.result events, expected exactly one` });
  if (last.type !== "batch.result")
    problems.push({ line: body.length, message: `last event is ${last.type}, not batch.result` });
  const summary = summaries[0];
  if (summary?.type === "batch.result") {
    for (const task of summary.tasks) {
      const result = groups.get(task.id)?.at(-1);
      if (task.run === "skipped") continue;
      if (result?.type !== "result")
        problems.push({ line: lineOf.get(summary)!, message: `task ${task.id} has no result in the stream` });
      else if (result.class !== task.class)
        problems.push({
          line: lineOf.get(summary)!,
          message: `task ${task.id}: the summary says ${task.class}, its result ${result.class}`,
        });
    }
    const listed = new Set(summary.tasks.map((t) => t.id));
    for (const id of groups.keys())
      if (!listed.has(id))
        problems.push({ line: lineOf.get(summary)!, message: `task ${id} is missing from batch.result.tasks` });
    // ok means exit 0, and exit 0 means every task succeeded (a batch that could not run has no
    // task, its problems, and exit 5).
    if (summary.ok !== (summary.exit_code === 0))
      problems.push({
        line: lineOf.get(summary)!,
        message: `batch.result.ok is ${summary.ok} but its exit_code is ${summary.exit_code}`,
      });
    if (summary.ok && !summary.tasks.every((t) => t.class === "success"))
      problems.push({
        line: lineOf.get(summary)!,
        message: "batch.result.ok is true but the task classes say otherwise",
      });
  }
  return { events, problems };
}

/** One turn's events: run.started first, exactly one result and it last, exit code matching its class. */
function checkTurn(
  events: OcEvent[],
  lineOf: Map<OcEvent, number>,
  lastLine: number,
  problems: StreamProblem[],
  prefix: string,
): void {
  if (events[0]!.type !== "run.started")
    problems.push({
      line: lineOf.get(events[0]!)!,
      message: `${prefix}first event is ${events[0]!.type}, not run.started`,
    });
  const results = events.filter((e) => e.type === "result");
  if (results.length !== 1)
    problems.push({ line: null, message: `${prefix}${results.length} result events, expected exactly one` });
  const last = events[events.length - 1]!;
  if (last.type !== "result")
    problems.push({ line: lastLine, message: `${prefix}last event is ${last.type}, not result` });
  for (const result of results) {
    if (result.type !== "result") continue;
    if (result.exit_code !== EXIT_CODES[result.class]) {
      problems.push({
        line: lineOf.get(result)!,
        message: `${prefix}exit_code ${result.exit_code} does not match class ${result.class} (${EXIT_CODES[result.class]})`,
      });
    }
    if (result.ok !== (result.class === "success"))
      problems.push({ line: lineOf.get(result)!, message: `${prefix}ok is ${result.ok} but class is ${result.class}` });
  }
}

/** A conversation: each turn's events form a turn stream; conversation-level lines count apart; its result is last. */
function checkConversation(
  events: OcEvent[],
  lineOf: Map<OcEvent, number>,
  lastLine: number,
  problems: StreamProblem[],
): void {
  const turns = new Map<number, OcEvent[]>();
  let outer = 0;
  for (const event of events) {
    if (event.turn === undefined) {
      if (event.seq !== outer)
        problems.push({ line: lineOf.get(event)!, message: `conversation-level seq ${event.seq}, expected ${outer}` });
      outer++;
      if (event.type !== "error" && event.type !== "warning" && event.type !== "conversation.result")
        problems.push({ line: lineOf.get(event)!, message: `${event.type} event without turn in a conversation` });
      continue;
    }
    const group = turns.get(event.turn) ?? [];
    if (event.seq !== group.length)
      problems.push({
        line: lineOf.get(event)!,
        message: `turn ${event.turn}: seq ${event.seq}, expected ${group.length}`,
      });
    group.push(event);
    turns.set(event.turn, group);
  }
  for (const [turn, group] of turns) checkTurn(group, lineOf, lineOf.get(group.at(-1)!)!, problems, `turn ${turn}: `);
  const last = events[events.length - 1]!;
  if (last.type !== "conversation.result") {
    problems.push({ line: lastLine, message: `last event is ${last.type}, not conversation.result` });
    return;
  }
  if (events.filter((e) => e.type === "conversation.result").length !== 1)
    problems.push({ line: null, message: "more than one conversation.result" });
  for (const t of last.turns) {
    const result = turns.get(t.turn)?.at(-1);
    if (result?.type !== "result" || result.class !== t.class)
      problems.push({
        line: lineOf.get(last)!,
        message: `turn ${t.turn}: the summary says ${t.class}, its result does not`,
      });
  }
  if (last.turns.length !== turns.size)
    problems.push({
      line: lineOf.get(last)!,
      message: `${turns.size} turns in the stream, ${last.turns.length} in conversation.result`,
    });
}
