// A turn that cannot even be described (a bad flag, an invalid option) still writes its
// run.started/result pair, without locating opencode or touching the turn engine.
import type { OcEvent, ResultEvent } from "../contract/schema.js";
import type { Clock } from "../events/emitter.js";
import type { OptionLabels } from "../outcome/labels.js";
import { createTurnCore } from "./turn-core.js";

export function failedStart(
  problem: { name: string; message: string },
  context: { cwd: string; clock?: Clock; labels?: OptionLabels },
  sink: (event: OcEvent) => void,
): ResultEvent {
  const core = createTurnCore(
    { workspace: context.cwd, session: null, maxOutputBytes: 0, clock: context.clock, labels: context.labels },
    sink,
  );
  core.started({ opencode: { path: null, version: null }, cwd: context.cwd, model: null, agent: null, resume: null });
  return core.finish(
    { stop: null, launchError: problem, internalError: null, process: null, outputError: null },
    { model: null },
  );
}
