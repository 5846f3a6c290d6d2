// The one module that writes to stdout. stdout carries JSONL events and nothing else; when the
// reader goes away (EPIPE, `oc-exec ... | head -1`) we stop writing and tell the caller once.
import type { OcEvent } from "../events/schema.js";

export type StdoutWriter = { write(event: OcEvent): void; readonly broken: boolean };

export function createStdoutWriter(stream: NodeJS.WritableStream = process.stdout, onBrokenPipe: () => void = () => {}): StdoutWriter {
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
      if (broken) return;
      try {
        stream.write(`${JSON.stringify(event)}\n`);
      } catch {
        fail();
      }
    },
    get broken() {
      return broken;
    },
  };
}

/** The raw text `oc-exec schema` prints: the one other thing stdout ever carries, on request. */
export function writeStdoutText(text: string): void {
  process.stdout.write(text);
}
