// Offline normalization of a recorded `opencode run --format json` stream: the same turn core
// (normalizer, classifier, result) as a live run, fed from saved stdout (and stderr) instead of a
// process. Used by `oc-exec replay` and by the fixture tests.
import type { OcEvent, ResultEvent } from "../contract/schema.js";
import type { Clock } from "../events/emitter.js";
import { LineSplitter } from "../events/line-splitter.js";
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
  /** The recorded workspace: file.changed paths are made relative to it. Default: the current directory. */
  workspace?: string;
  session?: string | null;
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
  const session = rec.session ?? null;
  const core = createTurnCore({ workspace, session, maxOutputBytes, maxLineBytes, clock: rec.clock }, (event) => {
    events.push(event);
    sink(event);
  });
  core.started({
    opencode: { path: null, version: rec.opencodeVersion ?? null },
    cwd: workspace,
    model: null,
    agent: null,
    resume: session,
  });
  const split = splitterOptions(maxLineBytes, maxOutputBytes);
  const out = new LineSplitter((line) => core.eventLine(line), split.stdout);
  const err = new LineSplitter((line) => core.logLine(line.text), split.stderr);
  const feedStderr = () => {
    if (rec.stderr !== undefined) err.push(Buffer.from(rec.stderr));
    err.end();
  };
  if (rec.stderrFirst !== false) feedStderr();
  out.push(Buffer.from(rec.stdout));
  out.end();
  if (rec.stderrFirst === false) feedStderr();
  const process_ = { exitCode: rec.exitCode === undefined ? 0 : rec.exitCode, signal: rec.signal ?? null };
  const end: TurnEnd = {
    stop: null,
    launchError: null,
    internalError: null,
    process: process_,
    outputError: null,
    ...rec.end,
  };
  return { events, result: core.finish(end, { model: null }) };
}
