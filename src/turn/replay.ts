// Offline normalization of a recorded `opencode run --format json` stream: the same turn core
// (normalizer, classifier, result) as a live run, fed from saved stdout (and stderr) instead of a
// process. Used by `oc-exec replay` and by the fixture tests.
import type { OcEvent, ResultEvent } from "../contract/schema.js";
import type { Clock } from "../events/emitter.js";
import { LineSplitter } from "../events/line-splitter.js";
import type { TurnEnd } from "../outcome/classify.js";
import { DEFAULTS } from "./options.js";
import { createTurnCore, splitterOptions } from "./turn-core.js";

/** How a recorded turn ended and where it ran; the streams themselves are fed separately. */
export type RecordingMeta = {
  /** How the recorded opencode ended; exit 0 when unknown. */
  exitCode?: number | null;
  signal?: string | null;
  opencodeVersion?: string | null;
  /** The recorded workspace: file.changed paths are made relative to it. Default: the current directory. */
  workspace?: string;
  session?: string | null;
  maxOutputBytes?: number;
  maxLineBytes?: number;
  clock?: Clock;
  end?: Partial<TurnEnd>;
};

export type Recording = RecordingMeta & {
  stdout: Buffer | string;
  stderr?: Buffer | string;
  /** stderr is fed before stdout unless false: the order of two pipes is not recorded. */
  stderrFirst?: boolean;
};

export type Replay = {
  /** Feed the recorded stdout or stderr in chunks of any size; end() each when it is done. */
  stdout: { push(chunk: Buffer): void; end(): void };
  stderr: { push(chunk: Buffer): void; end(): void };
  /** Both streams are done: classify and write the result. */
  finish(): ResultEvent;
};

/** A replay fed chunk by chunk: memory stays flat however long the recording (oc-exec replay). */
export function openReplay(rec: RecordingMeta, sink: (event: OcEvent) => void): Replay {
  const workspace = rec.workspace ?? process.cwd();
  const maxLineBytes = rec.maxLineBytes ?? DEFAULTS.maxLineBytes;
  const maxOutputBytes = rec.maxOutputBytes ?? DEFAULTS.maxOutputBytes;
  const session = rec.session ?? null;
  const core = createTurnCore({ workspace, session, maxOutputBytes, maxLineBytes, clock: rec.clock }, sink);
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
  return {
    stdout: out,
    stderr: err,
    finish() {
      const process_ = { exitCode: rec.exitCode === undefined ? 0 : rec.exitCode, signal: rec.signal ?? null };
      const end: TurnEnd = {
        stop: null,
        launchError: null,
        internalError: null,
        process: process_,
        outputError: null,
        ...rec.end,
      };
      return core.finish(end, { model: null });
    },
  };
}

/** A whole recording at once, every event kept: for tests and fixtures. */
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
