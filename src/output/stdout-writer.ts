// The one module that writes to stdout. stdout carries JSONL events and nothing else; when the
// reader goes away (EPIPE, `oc-exec ... | head -1`) we stop writing and tell the caller once.
import type { OcEvent } from "../contract/schema.js";

export type StdoutWriter = {
  /** False when the reader is behind: wait for drained() before writing more. */
  write(event: OcEvent): boolean;
  /** Resolves once the reader has caught up, or stdout is gone (then writes are dropped anyway). */
  drained(): Promise<void>;
  readonly broken: boolean;
};

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
  return {
    write(event) {
      if (broken) return true;
      try {
        return stream.write(`${JSON.stringify(event)}\n`);
      } catch {
        fail();
        return true;
      }
    },
    drained() {
      if (broken) return Promise.resolve();
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
export function writeStdoutText(text: string): void {
  if (textReaderGone) return;
  if (process.stdout.listenerCount("error") === 0) {
    process.stdout.on("error", () => {
      textReaderGone = true;
    });
  }
  process.stdout.write(text);
}
