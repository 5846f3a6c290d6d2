// Offline normalization of a recorded `opencode run --format json` stream: the same normalizer,
// classifier and result builder as a live run, fed from saved stdout (and stderr) instead of a
// process. Used by `oc-exec replay` and by the fixture tests.
import { Emitter, type Clock } from "../events/emitter.js";
import { LineSplitter } from "../events/line-splitter.js";
import { Normalizer } from "../events/normalize.js";
import type { OcEvent, ResultEvent } from "../events/schema.js";
import { SCHEMA_VERSION } from "../events/schema-version.js";
import { classifyOutcome, type TurnEnd } from "../outcome/classify.js";
import { buildResult } from "../outcome/result.js";
import { VERSION } from "../version.js";
import { DEFAULTS } from "./options.js";

export type Recording = {
  stdout: Buffer | string;
  stderr?: Buffer | string;
  /** How the recorded opencode ended; exit 0 when unknown. */
  exitCode?: number | null;
  signal?: string | null;
  opencodeVersion?: string | null;
  workspace?: string;
  resume?: string | null;
  maxOutputBytes?: number;
  maxLineBytes?: number;
  /** stderr is fed before stdout unless false: the order of two pipes is not recorded. */
  stderrFirst?: boolean;
  clock?: Clock;
  end?: Partial<TurnEnd>;
};

export function replayRecording(rec: Recording, sink: (event: OcEvent) => void = () => {}): { events: OcEvent[]; result: ResultEvent } {
  const events: OcEvent[] = [];
  const clock = rec.clock ?? Date.now;
  const started = clock();
  const workspace = rec.workspace ?? process.cwd();
  const normalizer: Normalizer = new Normalizer(
    { workspace, resume: rec.resume ?? null, maxOutputBytes: rec.maxOutputBytes ?? DEFAULTS.maxOutputBytes, maxLineBytes: rec.maxLineBytes ?? DEFAULTS.maxLineBytes },
    (draft) => emitter.emit(draft),
  );
  const emitter = new Emitter(
    (event) => {
      events.push(event);
      sink(event);
    },
    () => normalizer.facts.sessionId,
    clock,
  );
  emitter.emit({
    type: "run.started",
    schema_version: SCHEMA_VERSION,
    oc_exec_version: VERSION,
    opencode: { path: null, version: rec.opencodeVersion ?? null },
    cwd: workspace,
    model: null,
    agent: null,
    resume: rec.resume ?? null,
  });
  const out = new LineSplitter((line) => normalizer.stdoutLine(line.text, line), rec.maxLineBytes ?? DEFAULTS.maxLineBytes);
  const err = new LineSplitter((line) => normalizer.stderrLine(line.text));
  const feedStderr = () => {
    if (rec.stderr !== undefined) err.push(Buffer.from(rec.stderr));
    err.end();
  };
  if (rec.stderrFirst !== false) feedStderr();
  out.push(Buffer.from(rec.stdout));
  out.end();
  if (rec.stderrFirst === false) feedStderr();
  normalizer.finish();
  const process_ = { exitCode: rec.exitCode === undefined ? 0 : rec.exitCode, signal: rec.signal ?? null };
  const end: TurnEnd = { stop: null, launchError: null, internalError: null, process: process_, ...rec.end };
  const outcome = classifyOutcome(normalizer.facts, end);
  emitter.emit(buildResult(normalizer.facts, outcome, { durationMs: clock() - started, model: null, process: end.process }));
  return { events, result: events[events.length - 1] as ResultEvent };
}
