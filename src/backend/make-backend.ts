// Chooses and makes the backend for a run, once: a running server when the caller names one
// (--attach), else `opencode run`. Callers (the library's runTurn, the CLI, a batch, a conversation)
// make it before their first turn and hand the same value to every turn.
import type { ResolvedTurn } from "../options/resolve-options.js";
import type { OptionLabels } from "../outcome/labels.js";
import { makeProcessBackend } from "../process/process-backend.js";
import { makeServerBackend } from "../server/server-backend.js";
import type { Backend } from "./backend.js";

/** From the resolved options: the server (attach), else the binary (opencode), the environment. */
export type BackendSpec = Pick<ResolvedTurn, "attach" | "opencode" | "env"> & { labels: Pick<OptionLabels, "attach"> };

export function makeBackend(spec: BackendSpec): Promise<Backend> {
  return spec.attach === null
    ? makeProcessBackend({ opencode: spec.opencode, env: spec.env })
    : makeServerBackend({ attach: spec.attach, label: spec.labels.attach, env: spec.env });
}
