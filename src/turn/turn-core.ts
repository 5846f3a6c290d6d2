// What a live turn and an offline replay share: the normalizer feeding the emitter, the first
// event (run.started) and the last (the classified result). One place, so replay really gives
// the events a live run gives.
import { Emitter, type Clock } from "../events/emitter.js";
import type { SplitterOptions } from "../events/line-splitter.js";
import { Normalizer, type NormalizerOptions } from "../events/normalize.js";
import { keepBytesFor } from "../events/output-cutter.js";
import type { EventDraft, EventOf, OcEvent, ResultEvent } from "../events/schema.js";
import { SCHEMA_VERSION } from "../events/schema-version.js";
import { classifyOutcome, type TurnEnd } from "../outcome/classify.js";
import { buildResult, type ResultMeta } from "../outcome/result.js";
import { VERSION } from "../version.js";

/** stderr lines are only read for errors and shown with --verbose; a megabyte is plenty. */
const STDERR_MAX_LINE = 1024 * 1024;

/** How opencode's two pipes are split into lines: the same live and in replay. */
export function splitterOptions(
  maxLineBytes: number,
  maxOutputBytes: number,
): { stdout: SplitterOptions; stderr: SplitterOptions } {
  return {
    stdout: { maxLineBytes, outputKeepBytes: keepBytesFor(maxOutputBytes) },
    stderr: { maxLineBytes: STDERR_MAX_LINE },
  };
}

export type RunStartedFields = Pick<EventOf<"run.started">, "opencode" | "cwd" | "model" | "agent" | "resume">;

export type TurnCore = {
  normalizer: Normalizer;
  /** The opencode line being normalized; with includeRaw, events derived from it carry it. */
  rawLine: { text: string | null };
  started(fields: RunStartedFields): void;
  /** Flushes the normalizer, classifies, writes the result and returns it. */
  finish(end: TurnEnd, meta: Omit<ResultMeta, "durationMs" | "process">): ResultEvent;
};

export function createTurnCore(
  options: NormalizerOptions & { includeRaw?: boolean; clock?: Clock },
  sink: (event: OcEvent) => void,
): TurnCore {
  const clock = options.clock ?? Date.now;
  const startedAt = clock();
  const rawLine: TurnCore["rawLine"] = { text: null };
  let result: ResultEvent | null = null;
  const normalizer: Normalizer = new Normalizer(options, (draft) =>
    emitter.emit(options.includeRaw && rawLine.text !== null ? ({ ...draft, raw: rawLine.text } as EventDraft) : draft),
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
    rawLine,
    started: (fields) =>
      emitter.emit({ type: "run.started", schema_version: SCHEMA_VERSION, oc_exec_version: VERSION, ...fields }),
    finish(end, meta) {
      try {
        normalizer.finish();
      } catch (error) {
        end.internalError ??= { message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
      }
      const outcome = classifyOutcome(normalizer.facts, end);
      emitter.emit(
        buildResult(normalizer.facts, outcome, { ...meta, durationMs: clock() - startedAt, process: end.process }),
      );
      return result!;
    },
  };
}
