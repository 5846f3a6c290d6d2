// A turn that cannot even be described (a bad flag, an invalid option), or that a stop of its batch
// kept from starting, still writes its run.started/result pair, without a backend: the classifier
// gives it its class (config_error for a problem, the stop's class for a turn not run).
import type { OcEvent, ResultEvent } from "../contract/schema.js";
import type { Clock } from "../domain/events/emitter.js";
import type { StopReason, TurnEnd } from "../domain/outcome/classify.js";
import { createTurnCore } from "./turn-core.js";

export type FailedStartContext = {
  cwd: string;
  clock?: Clock;
  /** The stop of many turns together that kept this one from starting. */
  notRun?: { stop: StopReason; scope: NonNullable<TurnEnd["notRun"]>["scope"] };
};

export function failedStart(
  problem: { name: string; message: string } | null,
  context: FailedStartContext,
  sink: (event: OcEvent) => void,
): ResultEvent {
  const core = createTurnCore({ workspace: context.cwd, session: null, maxOutputBytes: 0, clock: context.clock }, sink);
  core.started({ opencode: { path: null, version: null }, cwd: context.cwd, model: null, agent: null, resume: null });
  return core.finish(
    {
      stop: context.notRun?.stop ?? null,
      launchError: problem,
      internalError: null,
      process: null,
      outputError: null,
      notRun: context.notRun ? { scope: context.notRun.scope } : null,
    },
    { model: null },
  );
}
