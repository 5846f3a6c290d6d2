// The programmatic API: runTurn(options) is an async iterable of typed events that always ends
// with the result event. The CLI runs the same engine (executeTurn) on the same backends.

import type { OcEvent } from "../contract/schema.js";
import type { StopReason } from "../domain/outcome/classify.js";
import { ConfigError } from "../domain/outcome/errors.js";
import { API_LABELS } from "../domain/outcome/labels.js";
import { TurnControl } from "../engine/control.js";
import { executeTurn } from "../engine/execute.js";
import { failedStart } from "../engine/failed-start.js";
import { closeBackend, makeBackend } from "../hosts/make-backend.js";
import { readEnvironment } from "../kernel/environment.js";
import { type RunTurnOptions, unknownOptionKeys } from "../plan/options.js";
import { type ResolvedTurn, resolveTurnOptions } from "../plan/resolve-options.js";
import type { RunningRehearsal } from "./rehearsal.js";
import { rehearse } from "./rehearse.js";

export type Turn = AsyncIterable<OcEvent> & {
  /** Stop the turn: SIGTERM to opencode's process group, SIGKILL after the grace period. */
  abort(reason?: StopReason): void;
};

// Flow control: with this many events waiting for the consumer, opencode's stdout is no longer
// read (opencode then blocks on its pipe, as it would under any slow reader); reading resumes
// once the consumer is down to the low mark. Counts, not bytes: one event is at most one line.
const QUEUE_HIGH = 64;
const QUEUE_LOW = 16;

/**
 * Runs one turn. Invalid options end in a config_error result, like every other problem. Events
 * wait in a queue for the consumer (the CLI, which needs none, hands the engine a sink instead).
 */
export function runTurn(options: RunTurnOptions): Turn {
  const control = new TurnControl();
  const queue: OcEvent[] = [];
  let wake: (() => void) | null = null;
  let finished = false;
  let failure: unknown = null;
  let started = false;

  const push = (event: OcEvent) => {
    queue.push(event);
    if (queue.length >= QUEUE_HIGH) control.backpressure(true);
    wake?.();
  };
  const run = async () => {
    let resolved: ResolvedTurn;
    let rehearsal: RunningRehearsal | null = null;
    try {
      try {
        const unknown = unknownOptionKeys(options);
        if (unknown.length > 0)
          throw new ConfigError(
            `runTurn does not take ${unknown.length === 1 ? "the option" : "the options"} ${unknown.join(", ")}`,
            "UsageError",
          );
        const env = options.env ?? process.env;
        const read = async () => ({ text: options.prompt, warnings: [] });
        const name = options.rehearse ?? readEnvironment(env).rehearse;
        const rehearsed = await rehearse(name, API_LABELS, options, read, env);
        rehearsal = rehearsed.rehearsal;
        resolved = resolveTurnOptions(
          { ...rehearsed.options, env: rehearsed.env },
          rehearsal ? { prompt: rehearsed.prompt } : {},
        );
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        failedStart({ name: error.name, message: error.message }, { cwd: process.cwd() }, push);
        return;
      }
      const backend = makeBackend(resolved.placement, control.startup);
      try {
        await executeTurn(resolved, backend, push, control);
      } finally {
        await closeBackend(backend);
      }
    } finally {
      await rehearsal?.stop();
    }
  };
  const start = () => {
    if (started) return;
    started = true;
    run()
      .catch((error: unknown) => {
        failure = error;
      })
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
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
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
