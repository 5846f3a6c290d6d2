// What a live turn and an offline replay share: the normalizer feeding the emitter, the first
// event (run.started) and the last (the classified result). One place, so replay really gives
// the events a live run gives.

import type { EventDraft, EventOf, OcEvent, ResultEvent } from "../contract/schema.js";
import { SCHEMA_VERSION } from "../contract/schema-version.js";
import { type Clock, Emitter } from "../domain/events/emitter.js";
import type { SplitLine } from "../domain/events/line-splitter.js";
import { Normalizer, type NormalizerOptions } from "../domain/events/normalize.js";
import { makeRedactor, type Redactor, secretValues } from "../domain/events/secrets.js";
import { classifyOutcome, type OutcomeRules, type TurnEnd } from "../domain/outcome/classify.js";
import { errorText } from "../domain/outcome/errors.js";
import { buildResult, type ResultMeta } from "../domain/outcome/result.js";
import { VERSION } from "../kernel/version.js";

export type RunStartedFields = Pick<
  EventOf<"run.started">,
  "opencode" | "cwd" | "model" | "agent" | "resume" | "sandbox"
>;

export type TurnCore = {
  normalizer: Normalizer;
  /** Feeds one event line (stdout) or log line (stderr) to the normalizer. */
  eventLine(line: SplitLine): void;
  logLine(text: string): void;
  started(fields: RunStartedFields): void;
  /** An event of oc-exec's own (a check after the turn), redacted like the rest. */
  emit(draft: EventDraft): void;
  /** From now on events belong to this attempt (with `attempts` on, each carries it). */
  setAttempt(attempt: number): void;
  /** Flushes the normalizer, classifies, writes the result and returns it. */
  finish(end: TurnEnd, meta: Omit<ResultMeta, "durationMs" | "process">): ResultEvent;
};

export type TurnCoreOptions = NormalizerOptions & {
  /** Secrets out of every event; default: the values of this process's secret variables. */
  redactor?: Redactor;
  includeRaw?: boolean;
  clock?: Clock;
  /** --fail-on and the names the outcome's advice uses; default: the library's. */
  rules?: OutcomeRules;
  /** Stamp `attempt` on every event (--retry, --fallback-model). */
  attempts?: boolean;
};

export function createTurnCore(options: TurnCoreOptions, sink: (event: OcEvent) => void): TurnCore {
  const clock = options.clock ?? Date.now;
  const startedAt = clock();
  // The opencode line being normalized: with includeRaw, the events derived from it carry it.
  let raw: string | null = null;
  let result: ResultEvent | null = null;
  let attempt = 1;
  const stamp = (draft: EventDraft): EventDraft => (options.attempts ? ({ attempt, ...draft } as EventDraft) : draft);
  const redactor = options.redactor ?? makeRedactor(secretValues(process.env));
  // Every event passes here: secrets out (a message.delta may hold back the start of one until the
  // rest arrives), and what a delta held back goes out before the complete message or the result.
  const emit = (draft: EventDraft) => {
    if (draft.type === "message.delta") {
      const text = redactor.piece(draft.part_id ?? "", draft.text);
      if (text !== "") emitter.emit(stamp(redactor.event({ ...draft, text })));
      return;
    }
    if (draft.type === "message" || draft.type === "result")
      for (const [part, text] of redactor.flush())
        emitter.emit(stamp({ type: "message.delta", text, part_id: part === "" ? null : part } as EventDraft));
    emitter.emit(stamp(redactor.event(draft)));
  };
  const normalizer: Normalizer = new Normalizer(options, (draft) =>
    emit(options.includeRaw && raw !== null ? ({ ...draft, raw } as EventDraft) : draft),
  );
  const emitter = new Emitter(
    (event) => {
      if (event.type === "result") result = event;
      sink(event);
    },
    () => normalizer.facts.sessionId,
    clock,
  );
  return {
    normalizer,
    eventLine(line) {
      // A cut line is valid JSON but not what opencode wrote, so it is not passed off as raw.
      raw = line.truncated || line.cut ? null : line.text;
      try {
        normalizer.stdoutLine(line.text, line);
      } finally {
        raw = null;
      }
    },
    logLine(text) {
      raw = text;
      try {
        normalizer.stderrLine(text);
      } finally {
        raw = null;
      }
    },
    emit,
    setAttempt(n) {
      attempt = n;
    },
    started: (fields) =>
      emit({ type: "run.started", schema_version: SCHEMA_VERSION, oc_exec_version: VERSION, ...fields }),
    finish(end, meta) {
      let internalError = end.internalError;
      try {
        normalizer.finish();
      } catch (error) {
        internalError ??= { message: errorText(error) };
      }
      const outcome = classifyOutcome(normalizer.facts, { ...end, internalError }, options.rules);
      emit(buildResult(normalizer.facts, outcome, { ...meta, durationMs: clock() - startedAt, process: end.process }));
      return result!;
    },
  };
}
