// The one module that writes to stdout. stdout carries JSONL events and nothing else; when the
// reader goes away (EPIPE, `oc-exec ... | head -1`) we stop writing and tell the caller once.
import type { OcEvent } from "../../contract/schema.js";

export type StdoutWriter = {
  /** False when the reader is behind: wait for drained() before writing more. */
  write(event: OcEvent): boolean;
  /** Resolves once the reader has caught up, or stdout is gone (then writes are dropped anyway). */
  drained(): Promise<void>;
  readonly broken: boolean;
};

/** A batch this large leaves at once, without waiting for the end of the turn of the loop. */
const BATCH_CHARS = 64 * 1024;

export function createStdoutWriter(
  stream: NodeJS.WritableStream = process.stdout,
  onBrokenPipe: () => void = () => {},
): StdoutWriter {
  let broken = false;
  const fail = () => {
    if (broken) return;
    broken = true;
    onBrokenPipe();
  };
  // EPIPE is the usual one; any error on stdout means nothing more can be delivered.
  stream.on("error", fail);
  // Events are gathered for the rest of this turn of the event loop and leave in one write: on an
  // event-dense stream a write per event (a system call each when stdout is a file) cost more
  // than everything else oc-exec does with the event. Nothing waits for opencode's next line:
  // the batch leaves before the next chunk of input is handled.
  let batch = "";
  let scheduled = false;
  let behind = false;
  stream.on("drain", () => {
    behind = false;
  });
  const flush = () => {
    scheduled = false;
    const text = batch;
    batch = "";
    if (text === "" || broken) return;
    try {
      if (!stream.write(text)) behind = true;
    } catch {
      fail();
    }
  };
  return {
    write(event) {
      if (broken) return true;
      batch += `${JSON.stringify(event)}\n`;
      if (batch.length >= BATCH_CHARS) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
      return !behind;
    },
    drained() {
      flush();
      if (broken || !behind) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          stream.off("drain", done);
          stream.off("error", done);
          stream.off("close", done);
          resolve();
        };
        stream.on("drain", done);
        stream.on("error", done);
        stream.on("close", done);
      });
    },
    get broken() {
      return broken;
    },
  };
}

let textReaderGone = false;

/**
 * Text on request (help, versions, `oc-exec schema`, reports with --json): the other things stdout
 * carries, only when asked. A reader that goes away early (`--help | head -3`) is not an error.
 */
export function writeStdoutText(text: string, stream: NodeJS.WritableStream = process.stdout): void {
  if (textReaderGone) return;
  if (stream.listenerCount("error") === 0) {
    stream.on("error", () => {
      textReaderGone = true;
    });
  }
  stream.write(text);
}
