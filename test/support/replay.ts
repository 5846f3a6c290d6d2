// The fixture tests' view of src/engine/replay.ts, with a fixed clock and workspace: a whole
// recording replayed at once, every event kept (test-only, so not in src/).
import type { OcEvent, ResultEvent } from "../../src/contract/schema.js";
import type { TurnEnd } from "../../src/domain/outcome/classify.js";
import { openReplay, type Recording } from "../../src/engine/replay.js";

/** A whole recording at once, every event kept. */
export function replayRecording(
  rec: Recording,
  sink: (event: OcEvent) => void = () => {},
): { events: OcEvent[]; result: ResultEvent } {
  const events: OcEvent[] = [];
  const replay = openReplay(rec, (event) => {
    events.push(event);
    sink(event);
  });
  const feedStderr = () => {
    if (rec.stderr !== undefined) replay.stderr.push(Buffer.from(rec.stderr));
    replay.stderr.end();
  };
  if (rec.stderrFirst !== false) feedStderr();
  replay.stdout.push(Buffer.from(rec.stdout));
  replay.stdout.end();
  if (rec.stderrFirst === false) feedStderr();
  return { events, result: replay.finish() };
}

export type Replayed = { started: OcEvent; events: OcEvent[]; result: ResultEvent; types: string[] };

export function replayStreams(
  stdout: string | Buffer,
  stderr: string | Buffer,
  end: Partial<TurnEnd> & { exitCode?: number | null; signal?: string | null } = {},
  options: {
    workspace?: string;
    session?: string | null;
    maxOutputBytes?: number;
    maxLineBytes?: number;
    stderrFirst?: boolean;
  } = {},
): Replayed {
  let now = Date.UTC(2026, 0, 1);
  const { exitCode, signal, ...turnEnd } = end;
  const { events, result } = replayRecording({
    stdout,
    stderr,
    exitCode: exitCode ?? 0,
    signal: signal ?? null,
    workspace: options.workspace ?? "/tmp/oc-exec-fixture/workspace",
    session: options.session,
    maxOutputBytes: options.maxOutputBytes,
    maxLineBytes: options.maxLineBytes,
    stderrFirst: options.stderrFirst,
    clock: () => now++,
    end: turnEnd,
  });
  // run.started is the same for every replay; the fixture tests look at what follows.
  const rest = events.slice(1);
  return { started: events[0]!, events: rest, result, types: rest.map((e) => e.type) };
}
