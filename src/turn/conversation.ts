// A conversation: turns read one by one from a JSONL input (stdin with --input-format jsonl), each
// sent when the previous one has ended, all in one session. Each turn runs through the same turn
// engine; its events carry `turn` and end with its result. Limits apply per turn (the turn's own
// options) and to the whole conversation (budgets summed over the turns, one timeout from the
// start). A malformed input line is an error event and the conversation goes on; the input ending
// ends it; conversation.result is the last line.
import { EXIT_CODES } from "../contract/exit-codes.js";
import type { ConversationResult, OcEvent } from "../contract/schema.js";
import { SCHEMA_VERSION } from "../contract/schema-version.js";
import { type BudgetLimit, type StopReason, stopClass } from "../outcome/classify.js";
import { ConfigError } from "../outcome/errors.js";
import type { OptionLabels } from "../outcome/labels.js";
import { TurnControl } from "./control.js";
import { executeTurn } from "./execute.js";
import { failedStart } from "./failed-start.js";
import type { RunTurnOptions } from "./options.js";
import { resolveTurnOptions } from "./resolve-options.js";
import { addUsage, emptyUsage } from "../contract/usage.js";

/** Limits on the whole conversation, with the option that set each (for messages); null = off. */
export type ConversationLimits = {
  maxSteps: number | null;
  maxTokens: number | null;
  maxCostUsd: number | null;
  timeoutMs: number | null;
  options: { steps: string; tokens: string; cost_usd: string; timeout: string };
};

export type ConversationPlan = {
  /** Every turn's options; the first turn's session/continue/fork start the conversation. */
  turn: Omit<RunTurnOptions, "prompt">;
  labels: OptionLabels;
  limits: ConversationLimits;
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

export async function runConversation(
  plan: ConversationPlan,
  sink: (event: OcEvent) => void,
  outer: TurnControl,
): Promise<ConversationResult> {
  const startedAt = Date.now();
  const usage = emptyUsage();
  let cost = 0;
  let steps = 0;
  let outerSeq = 0;
  let inputErrors = 0;
  let session: string | null = plan.turn.session ?? null;
  let stopped: StopReason | null = null;
  let current: TurnControl | null = null;
  const turns: ConversationResult["turns"] = [];
  const { limits } = plan;

  const stopAll = (reason: StopReason) => {
    stopped ??= reason;
    current?.abort(reason);
    plan.stopInput?.();
  };
  const unsubscribe = outer.subscribe(stopAll);
  const timer =
    limits.timeoutMs === null
      ? null
      : setTimeout(
          () =>
            stopAll({
              kind: "timeout",
              timeout: "turn",
              ms: limits.timeoutMs!,
              whole: { option: limits.options.timeout, scope: "conversation" },
            }),
          limits.timeoutMs,
        );
  const overBudget = () => {
    const check: [BudgetLimit, number | null, number][] = [
      ["steps", limits.maxSteps, steps],
      ["tokens", limits.maxTokens, usage.total],
      ["cost_usd", limits.maxCostUsd, cost],
    ];
    for (const [limit, max, used] of check) {
      if (max !== null && used > max)
        return stopAll({
          kind: "budget",
          limit,
          max,
          used,
          whole: { option: limits.options[limit], scope: "conversation" },
        });
    }
  };
  const inputError = (line: number, message: string) => {
    inputErrors++;
    sink({
      type: "error",
      seq: outerSeq++,
      time: new Date().toISOString(),
      session_id: session,
      class: "config_error",
      name: "InputError",
      message: `input line ${line}: ${message}; the line was skipped and the conversation goes on`,
      status_code: null,
      retryable: null,
    });
  };

  try {
    await eachLine(plan.lines, async (text, lineNo) => {
      if (stopped) return false;
      if (text.trim() === "") return true;
      const parsed = parseTurnLine(text);
      if ("error" in parsed) {
        inputError(lineNo, parsed.error);
        return true;
      }
      const turn = turns.length + 1;
      const control = new TurnControl();
      current = control;
      const releaseFlow = outer.onBackpressure((held) => control.backpressure(held));
      if (outer.isHeld) control.backpressure(true);
      const mark = (event: OcEvent) => sink({ ...event, turn });
      let result: Awaited<ReturnType<typeof executeTurn>>;
      try {
        const first = turn === 1;
        const resolved = resolveTurnOptions(
          {
            ...plan.turn,
            prompt: parsed.prompt,
            files: parsed.files ?? plan.turn.files,
            session: session ?? undefined,
            // Only the first turn may look for a session to continue or fork; the rest continue it.
            continue: first ? plan.turn.continue : false,
            fork: first ? plan.turn.fork : false,
          },
          { labels: plan.labels },
        );
        result = await executeTurn(
          resolved,
          (event) => {
            if (event.type === "step.started") steps++;
            if (event.type === "step.finished") {
              addUsage(usage, event.usage);
              cost += event.cost_usd;
            }
            mark(event);
            if (event.type === "step.started" || event.type === "step.finished") overBudget();
          },
          control,
        );
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        result = failedStart(error, { cwd: plan.turn.dir ?? process.cwd(), labels: plan.labels }, mark);
      } finally {
        releaseFlow();
        current = null;
      }
      // An ephemeral turn's session is gone; the next one starts its own.
      if (!plan.turn.ephemeral) session = result.session_id ?? session;
      turns.push({
        turn,
        class: result.class,
        exit_code: result.exit_code,
        cost_usd: result.cost_usd,
        duration_ms: result.duration_ms,
      });
      return !stopped;
    });
  } finally {
    if (timer) clearTimeout(timer);
    unsubscribe();
  }
  const ok = inputErrors === 0 && turns.every((t) => t.class === "success");
  const reason = stopped as StopReason | null;
  const exitCode = reason !== null ? EXIT_CODES[stopClass(reason)] : ok ? EXIT_CODES.success : EXIT_CODES.agent_error;
  const result: ConversationResult = {
    type: "conversation.result",
    seq: outerSeq++,
    time: new Date().toISOString(),
    session_id: session,
    schema_version: SCHEMA_VERSION,
    ok: reason === null && ok,
    exit_code: exitCode,
    turns,
    input_errors: inputErrors,
    usage,
    cost_usd: cost,
    duration_ms: Date.now() - startedAt,
  };
  sink(result);
  return result;
}

/** Feeds each input line to `handle` until it returns false or the input ends (or is stopped: AbortError). */
async function eachLine(
  lines: AsyncIterable<string>,
  handle: (text: string, lineNo: number) => Promise<boolean>,
): Promise<void> {
  let lineNo = 0;
  try {
    for await (const text of lines) if (!(await handle(text, ++lineNo))) return;
  } catch (error) {
    if ((error as Error).name !== "AbortError") throw error;
  }
}
