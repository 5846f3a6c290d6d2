// Delivers a stream of events to stdout for every command that writes one (a turn, a conversation,
// a batch): events are written as the engine emits them, with no queue between (a reader slower
// than opencode holds opencode back through control.backpressure instead of letting events pile up
// in memory); the stop signals reach the run through its control; a reader that goes away stops it
// (broken_pipe). Returns the exit status: the final event's, or 141 when stdout was lost.
import { BROKEN_PIPE_EXIT } from "../contract/exit-codes.js";
import type { OcEvent } from "../contract/schema.js";
import type { StopReason } from "../domain/outcome/classify.js";
import { createStdoutWriter } from "../domain/output/stdout-writer.js";
import { TurnControl } from "../engine/control.js";
import type { CliIo } from "./io.js";
import { onStopSignals } from "./signals.js";

/** Runs something that emits events into the sink, under the control; resolves with its last event. */
export type Driver = (sink: (event: OcEvent) => void, control: TurnControl) => Promise<{ exit_code: number }>;

export type Observer = {
  /** Each event as it is written (progress on stderr); `stdoutGone`: its reader went away, exit 141. */
  event?(event: OcEvent, stdoutGone: boolean): void;
  /** A stop signal arrived. */
  signal?(reason: StopReason, signal: NodeJS.Signals): void;
};

export async function deliver(drive: Driver, io: Pick<CliIo, "stdout">, observer: Observer = {}): Promise<number> {
  const control = new TurnControl();
  const stdout = createStdoutWriter(io.stdout, () => control.abort({ kind: "broken_pipe" }));
  const dispose = onStopSignals((reason, signal) => {
    observer.signal?.(reason, signal);
    control.abort(reason);
  });
  let holding = false;
  const sink = (event: OcEvent) => {
    const behind = !stdout.write(event);
    observer.event?.(event, stdout.broken);
    if (behind && !holding) {
      holding = true;
      control.backpressure(true);
      void stdout.drained().then(() => {
        holding = false;
        control.backpressure(false);
      });
    }
  };
  try {
    const last = await drive(sink, control);
    // The last line is written; let the reader take the rest before the exit status is set.
    await stdout.drained();
    return stdout.broken ? BROKEN_PIPE_EXIT : last.exit_code;
  } finally {
    dispose();
  }
}
