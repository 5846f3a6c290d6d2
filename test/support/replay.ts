// Feeds recorded opencode output through the pure core (normalizer, classifier, result) with no
// process, the way the live runner does, and returns the events it would write.
import { Emitter } from "../../src/events/emitter.js";
import { LineSplitter } from "../../src/events/line-splitter.js";
import { Normalizer } from "../../src/events/normalize.js";
import type { OcEvent, ResultEvent } from "../../src/events/schema.js";
import { classifyOutcome, type TurnEnd } from "../../src/outcome/classify.js";
import { buildResult } from "../../src/outcome/result.js";

export type Replayed = { events: OcEvent[]; result: ResultEvent; types: string[] };

export function replayStreams(
  stdout: string | Buffer,
  stderr: string | Buffer,
  end: Partial<TurnEnd> & { exitCode?: number | null; signal?: string | null } = {},
  options: { workspace?: string; resume?: string | null; maxOutputBytes?: number; maxLineBytes?: number; stderrFirst?: boolean } = {},
): Replayed {
  const events: OcEvent[] = [];
  let now = Date.UTC(2026, 0, 1);
  const normalizer: Normalizer = new Normalizer(
    { workspace: options.workspace ?? "/tmp/oc-exec-fixture/workspace", resume: options.resume ?? null, maxOutputBytes: options.maxOutputBytes ?? 65536, maxLineBytes: options.maxLineBytes },
    (d) => emitter.emit(d),
  );
  const emitter = new Emitter((e) => events.push(e), () => normalizer.facts.sessionId, () => now++);
  const out = new LineSplitter((l) => normalizer.stdoutLine(l.text, l), options.maxLineBytes);
  const err = new LineSplitter((l) => normalizer.stderrLine(l.text));
  const feedErr = () => {
    err.push(Buffer.from(stderr));
    err.end();
  };
  if (options.stderrFirst !== false) feedErr();
  out.push(Buffer.from(stdout));
  out.end();
  if (options.stderrFirst === false) feedErr();
  normalizer.finish();
  const turnEnd: TurnEnd = {
    stop: end.stop ?? null,
    launchError: end.launchError ?? null,
    internalError: end.internalError ?? null,
    process: end.process ?? { exitCode: end.exitCode ?? 0, signal: end.signal ?? null },
  };
  const outcome = classifyOutcome(normalizer.facts, turnEnd);
  emitter.emit(buildResult(normalizer.facts, outcome, { durationMs: 1, model: null, process: turnEnd.process }));
  const result = events[events.length - 1] as ResultEvent;
  return { events, result, types: events.map((e) => e.type) };
}
