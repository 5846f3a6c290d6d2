// Runs one turn from start to `result`: prepare (binary, run.started, checks, prompt, invocation),
// run the upstream source, the work after it, then the result (turn-core.ts, shared with replay).
// Each stage returns what it found; the classifier's input is assembled here, once.
// Every path ends in exactly one result event, including bugs in this file.
import type { OcEvent, ResultEvent } from "../contract/schema.js";
import { processSource } from "../opencode/process-source.js";
import type { TurnEnd } from "../outcome/classify.js";
import { type AfterTurn, afterTurn } from "./after-turn.js";
import type { TurnControl } from "./control.js";
import { type Prepared, prepareTurn } from "./prepare.js";
import type { ResolvedTurn } from "./resolve-options.js";
import { runSource, type SourceRun } from "./run-source.js";
import { createTurnCore, splitterOptions } from "./turn-core.js";

export async function executeTurn(
  options: ResolvedTurn,
  sink: (event: OcEvent) => void,
  control: TurnControl,
): Promise<ResultEvent> {
  control.follow(options.signal);
  const core = createTurnCore(
    {
      workspace: options.dir,
      session: options.session,
      continue: options.continue,
      fork: options.fork,
      maxOutputBytes: options.maxOutputBytes,
      maxLineBytes: options.maxLineBytes,
      includeRaw: options.includeRaw,
      clock: options.clock,
      labels: options.labels,
      failOn: options.failOn,
      onToolStarted: options.onToolStarted ?? undefined,
    },
    sink,
  );
  let prepared: Prepared | null = null;
  let ran: SourceRun | null = null;
  let after: AfterTurn | null = null;
  let bug: { message: string } | null = null;
  try {
    prepared = await prepareTurn(options, core);
    const { invocation } = prepared;
    if (invocation && control.reason === null) {
      const source = processSource(invocation, {
        killAfterMs: options.killAfterMs,
        split: splitterOptions(options.maxLineBytes, options.maxOutputBytes),
      });
      ran = await runSource(source, options, core, control);
    }
    if (invocation) after = await afterTurn(options, core.normalizer, invocation, ran?.stop ?? control.reason);
  } catch (error) {
    bug = { message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  const end: TurnEnd = {
    stop: ran?.stop ?? control.reason,
    launchError: prepared?.problem ?? ran?.failure ?? null,
    internalError: ran?.internalError ?? bug,
    process: ran?.process ?? null,
    outputError: after?.outputError ?? null,
  };
  return core.finish(end, {
    model: after?.model ?? options.model,
    costUsd: after?.costUsd,
    structuredOutput: after?.structuredOutput,
    sessionDeleted: after?.sessionDeleted,
  });
}
