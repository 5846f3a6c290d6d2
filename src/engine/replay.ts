// Offline normalization of a recorded `opencode run --format json` stream, or of a server's event
// stream (one `GET /event` data object per line): the same turn core (normalizer, classifier,
// result) as a live run, fed from saved lines instead of a process or a server. Used by
// `oc-exec replay` and by the fixture tests.
import type { OcEvent, ResultEvent } from "../contract/schema.js";
import type { Clock } from "../domain/events/emitter.js";
import { LineSplitter, type SplitLine } from "../domain/events/line-splitter.js";
import { ServerTranslator } from "../domain/events/server-translate.js";
import { splitterOptions } from "../domain/events/split-options.js";
import { isObject, type Json, readObject, readString } from "../domain/events/upstream.js";
import type { TurnEnd } from "../domain/outcome/classify.js";
import { DEFAULTS } from "../plan/options.js";
import { createTurnCore } from "./turn-core.js";

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
  /** A server recording: the session whose turn it is (default: the first one its events name). */
  serverSession?: string;
  /** A server recording: also replay the text deltas (message.delta). */
  deltas?: boolean;
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
  // The first event line tells the formats apart: a server event has `properties`, a run line has not.
  // A server recording is the turn of one session: the one named, else the first event's that has one.
  let format: "run" | "server" | null = null;
  let translator: ServerTranslator | null = null;
  const feed = (line: SplitLine) => {
    if (format === null) {
      if (line.text.trim() === "") return core.eventLine(line);
      format = serverEventOf(line.text) ? "server" : "run";
    }
    if (format === "run") return core.eventLine(line);
    if (!translator) {
      const sessionId = rec.serverSession ?? readString(serverEventOf(line.text)?.properties, "sessionID");
      if (!sessionId) return;
      translator = new ServerTranslator({ sessionId, deltas: rec.deltas ?? false });
    }
    for (const t of translator.translate(line.text)) {
      if (t.kind !== "line") continue;
      const text = JSON.stringify(t.line);
      core.eventLine({ text, truncated: false, cut: false, bytes: Buffer.byteLength(text) });
    }
  };
  const out = new LineSplitter(feed, split.stdout);
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
        // A server turn has no process of its own.
        process: format === "server" ? null : process_,
        outputError: null,
        ...rec.end,
      };
      // The model the recording names (opencode's log, or a server's messages), as a live run reports it.
      return core.finish(end, { model: core.normalizer.facts.model });
    },
  };
}

/** A server event ({type, properties}) with a session, or null for anything else. */
function serverEventOf(text: string): { properties: Json } | null {
  try {
    const value: unknown = JSON.parse(text);
    if (!isObject(value) || typeof value.type !== "string") return null;
    const properties = readObject(value, "properties");
    return properties ? { properties } : null;
  } catch {
    return null;
  }
}
