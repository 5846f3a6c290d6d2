// Offline normalization of a recorded `opencode run --format json` stream: the same turn core
// (normalizer, classifier, result) as a live run, fed from saved stdout (and stderr) instead of a
// process. Used by `oc-exec replay` and by the fixture tests.
import type { Clock } from "../events/emitter.js";
import { LineSplitter } from "../events/line-splitter.js";
import type { OcEvent, ResultEvent } from "../events/schema.js";
import type { TurnEnd } from "../outcome/classify.js";
import { DEFAULTS } from "./options.js";
import { createTurnCore, splitterOptions } from "./turn-core.js";

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

export function replayRecording(
  rec: Recording,
  sink: (event: OcEvent) => void = () => {},
): { events: OcEvent[]; result: ResultEvent } {
  const events: OcEvent[] = [];
  const workspace = rec.workspace ?? process.cwd();
  const maxLineBytes = rec.maxLineBytes ?? DEFAULTS.maxLineBytes;
  const maxOutputBytes = rec.maxOutputBytes ?? DEFAULTS.maxOutputBytes;
  const core = createTurnCore(
    { workspace, resume: rec.resume ?? null, maxOutputBytes, maxLineBytes, clock: rec.clock },
    (event) => {
      events.push(event);
      sink(event);
    },
  );
  core.started({
    opencode: { path: null, version: rec.opencodeVersion ?? null },
    cwd: workspace,
    model: null,
    agent: null,
    resume: rec.resume ?? null,
  });
  const split = splitterOptions(maxLineBytes, maxOutputBytes);
  const out = new LineSplitter((line) => core.normalizer.stdoutLine(line.text, line), split.stdout);
  const err = new LineSplitter((line) => core.normalizer.stderrLine(line.text), split.stderr);
  const feedStderr = () => {
    if (rec.stderr !== undefined) err.push(Buffer.from(rec.stderr));
    err.end();
  };
  if (rec.stderrFirst !== false) feedStderr();
  out.push(Buffer.from(rec.stdout));
  out.end();
  if (rec.stderrFirst === false) feedStderr();
  const process_ = { exitCode: rec.exitCode === undefined ? 0 : rec.exitCode, signal: rec.signal ?? null };
  const end: TurnEnd = { stop: null, launchError: null, internalError: null, process: process_, ...rec.end };
  return { events, result: core.finish(end, { model: null }) };
}
