// A conversation: turns read one by one from a JSONL input (stdin with --input-format jsonl), each
// sent when the previous one has ended, all in one session: the many-turn runner one at a time.
// Each turn's events carry `turn`. A malformed input line is an error event and the conversation
// goes on; the input ending ends it; conversation.result is the last line. Input errors and the
// conversation.result count their own seq, apart from the turns (docs/events.md).

import { EXIT_CODES } from "../contract/exit-codes.js";
import type { ConversationResult, OcEvent, ResultEvent } from "../contract/schema.js";
import { SCHEMA_VERSION } from "../contract/schema-version.js";
import { emptyUsage } from "../contract/usage.js";
import { Emitter } from "../domain/events/emitter.js";
import { bugMessage, errorText } from "../domain/outcome/errors.js";
import type { OptionLabels } from "../domain/outcome/labels.js";
import { manyTurnsExit, stopClass } from "../domain/outcome/many-turns-end.js";
import type { Backend } from "../engine/backend.js";
import type { TurnControl } from "../engine/control.js";
import { runTurns, type TurnJob } from "../engine/run-turns.js";
import type { RunTurnOptions } from "../plan/options.js";
import { resolveTurnOptions, type WholeLimits } from "../plan/resolve-options.js";

export type ConversationPlan = {
  /** Every turn's options; the first turn's session/continue/fork start the conversation. */
  turn: Omit<RunTurnOptions, "prompt">;
  labels: OptionLabels;
  limits: WholeLimits;
  /** Made by the caller once for the whole conversation; awaited here, so a failure ends in the result. */
  backend: Backend | Promise<Backend>;
  /** The input, one line per item (newline removed). */
  lines: AsyncIterable<string>;
  /** Stop reading the input (a stop while waiting for the next line must not wait for it). */
  stopInput?: () => void;
};

/** One input line: a JSON object {prompt, files?} or a JSON string (the prompt). */
export function parseTurnLine(text: string): { prompt: string; files?: string[] } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: `not JSON (${(error as Error).message})` };
  }
  if (typeof value === "string") return value.trim() === "" ? { error: "the prompt is empty" } : { prompt: value };
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { error: 'expected {"prompt": "..."} or a JSON string' };
  const { prompt, files, ...rest } = value as { prompt?: unknown; files?: unknown };
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return { error: `unknown field(s) ${unknown.join(", ")}; a turn has prompt and files` };
  if (typeof prompt !== "string" || prompt.trim() === "") return { error: "prompt must be a non-empty string" };
  if (files !== undefined && (!Array.isArray(files) || !files.every((f) => typeof f === "string")))
    return { error: "files must be an array of paths" };
  return files === undefined ? { prompt } : { prompt, files: files as string[] };
}

/** The session the conversation is in after these turns: the last one a turn reported (none when ephemeral). */
function sessionAfter(plan: ConversationPlan, earlier: readonly ResultEvent[]): string | null {
  const initial = plan.turn.session ?? null;
  if (plan.turn.ephemeral) return initial;
  let session = initial;
  for (const result of earlier) session = result.session_id ?? session;
  return session;
}

export async function runConversation(
  plan: ConversationPlan,
  sink: (event: OcEvent) => void,
  control: TurnControl,
): Promise<ConversationResult> {
  let inputErrors = 0;
  let turns = 0;
  let lastResults: readonly ResultEvent[] = [];
  // The conversation's own lines: input errors and its result, numbered in a scope of their own.
  let written: OcEvent | null = null;
  const outer = new Emitter(
    (event) => {
      written = event;
      sink(event);
    },
    () => sessionAfter(plan, lastResults),
  );

  async function* jobs(): AsyncGenerator<TurnJob & { turn: number }> {
    let lineNo = 0;
    try {
      for await (const text of plan.lines) {
        lineNo++;
        if (text.trim() === "") continue;
        const parsed = parseTurnLine(text);
        if ("error" in parsed) {
          inputErrors++;
          outer.emit({
            type: "error",
            class: "config_error",
            name: "InputError",
            message: `input line ${lineNo}: ${parsed.error}; the line was skipped and the conversation goes on`,
            status_code: null,
            retryable: null,
          });
          continue;
        }
        const turn = ++turns;
        // Files named by the input line are named by it in messages, not by a flag nobody used.
        const labels = parsed.files ? { ...plan.labels, files: `input line ${lineNo}: files` } : plan.labels;
        yield {
          turn,
          mark: (event) => ({ ...event, turn }),
          cwd: plan.turn.dir ?? process.cwd(),
          options: (earlier) => {
            lastResults = earlier;
            const session = sessionAfter(plan, earlier);
            return resolveTurnOptions(
              {
                ...plan.turn,
                prompt: parsed.prompt,
                files: parsed.files ?? plan.turn.files,
                session: session ?? undefined,
                // Only the first turn may look for a session to continue or fork; the rest continue it.
                continue: turn === 1 ? plan.turn.continue : false,
                fork: turn === 1 ? plan.turn.fork : false,
              },
              { labels },
            );
          },
        };
      }
    } catch (error) {
      // A stop while waiting for the next line aborts the read: the input has ended.
      if ((error as Error).name !== "AbortError") throw error;
    }
  }

  let run: Awaited<ReturnType<typeof runTurns<TurnJob & { turn: number }>>>;
  try {
    run = await runTurns(
      {
        jobs: jobs(),
        backend: await plan.backend,
        concurrency: 1,
        limits: plan.limits,
        reportNotRun: false,
        onStop: plan.stopInput,
      },
      { sink },
      control,
    );
  } catch (error) {
    // A bug: the conversation still ends with its result line, exit 70, as a single turn does.
    outer.emit({
      type: "error",
      class: "internal_error",
      name: "InternalError",
      message: bugMessage(errorText(error)),
      status_code: null,
      retryable: null,
    });
    outer.emit({
      type: "conversation.result",
      schema_version: SCHEMA_VERSION,
      ok: false,
      exit_code: EXIT_CODES.internal_error,
      turns: [],
      input_errors: inputErrors,
      usage: emptyUsage(),
      cost_usd: 0,
      duration_ms: 0,
    });
    return written as unknown as ConversationResult;
  }
  lastResults = run.turns.map((t) => t.result);
  const end = manyTurnsExit({
    stop: run.stop ? stopClass(run.stop) : null,
    incomplete: false,
    allSucceeded: inputErrors === 0 && run.turns.every((t) => t.result.class === "success"),
  });
  const result = {
    type: "conversation.result",
    schema_version: SCHEMA_VERSION,
    ok: end.ok,
    exit_code: end.exitCode,
    turns: run.turns.map(({ job, result: r }) => ({
      turn: job.turn,
      class: r.class,
      exit_code: r.exit_code,
      cost_usd: r.cost_usd,
      duration_ms: r.duration_ms,
    })),
    input_errors: inputErrors,
    usage: run.usage,
    cost_usd: run.costUsd,
    duration_ms: run.durationMs,
  } as const;
  outer.emit(result);
  return written as unknown as ConversationResult;
}
