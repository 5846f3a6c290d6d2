// Checks an oc-exec JSONL stream against the contract: every line valid against the schema,
// seq contiguous from 0, run.started first, exactly one result and it is last, and exit_code
// consistent with class. Used by `oc-exec validate` and inside the end-to-end tests.
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
    if (event.seq !== events.length) problems.push({ line, message: `seq ${event.seq}, expected ${events.length}` });
    events.push(event);
    lineOf.set(event, line);
  });
  if (events.length === 0) {
    problems.push({ line: null, message: "no events" });
    return { events, problems };
  }
  if (events[0]!.type !== "run.started")
    problems.push({ line: 1, message: `first event is ${events[0]!.type}, not run.started` });
  const results = events.filter((e) => e.type === "result");
  if (results.length !== 1)
    problems.push({ line: null, message: `${results.length} result events, expected exactly one` });
  const last = events[events.length - 1]!;
  if (last.type !== "result") problems.push({ line: body.length, message: `last event is ${last.type}, not result` });
  for (const result of results) {
    if (result.type !== "result") continue;
    if (result.exit_code !== EXIT_CODES[result.class]) {
      problems.push({
        line: lineOf.get(result)!,
        message: `exit_code ${result.exit_code} does not match class ${result.class} (${EXIT_CODES[result.class]})`,
      });
    }
    if (result.ok !== (result.class === "success"))
      problems.push({ line: lineOf.get(result)!, message: `ok is ${result.ok} but class is ${result.class}` });
  }
  return { events, problems };
}
