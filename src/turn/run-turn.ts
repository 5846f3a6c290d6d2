// The programmatic API: runTurn(options) is an async iterable of typed events that always ends
// with the result event. The CLI is built on it.
import type { OcEvent } from "../events/schema.js";
import type { StopReason } from "../outcome/classify.js";
import { TurnControl } from "./control.js";
import { executeTurn } from "./execute.js";
import type { TurnOptions } from "./options.js";

export type Turn = AsyncIterable<OcEvent> & {
  /** Stop the turn: SIGTERM to opencode's process group, SIGKILL after the grace period. */
  abort(reason?: StopReason): void;
};

// Flow control: with this many events waiting for the consumer, opencode's stdout is no longer
// read (opencode then blocks on its pipe, as it would under any slow reader); reading resumes
// once the consumer is down to the low mark. Counts, not bytes: one event is at most one line.
const QUEUE_HIGH = 64;
const QUEUE_LOW = 16;

export function runTurn(options: TurnOptions): Turn {
  const control = new TurnControl();
  const queue: OcEvent[] = [];
  let wake: (() => void) | null = null;
  let finished = false;
  let failure: unknown = null;
  let started = false;

  const start = () => {
    if (started) return;
    started = true;
    executeTurn(
      options,
      (event) => {
        queue.push(event);
        if (queue.length >= QUEUE_HIGH) control.backpressure(true);
        wake?.();
      },
      control,
    )
      .catch((error: unknown) => (failure = error))
      .finally(() => {
        finished = true;
        wake?.();
      });
  };

  return {
    abort: (reason = { kind: "interrupted", signal: "abort" }) => control.abort(reason),
    async *[Symbol.asyncIterator]() {
      start();
      try {
        for (;;) {
          while (queue.length > 0) {
            const event = queue.shift()!;
            if (queue.length <= QUEUE_LOW) control.backpressure(false);
            yield event;
          }
          if (finished) break;
          await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
        }
      } finally {
        // A consumer that stops early (break, throw) must not leave opencode running.
        if (!finished) control.abort({ kind: "interrupted", signal: "abort" });
      }
      if (failure) throw failure;
    },
  };
}
