// The one wiring of a rehearsal (--rehearse, OC_EXEC_REHEARSE, the library's `rehearse`), shared by
// the CLI's turn and the library's runTurn: the name checked, the scripted model started (loaded
// only then), the options pointed at it and the prompt given its scenario and warning. What cannot
// be rehearsed offline (a server named by --attach, an --ssh host) is refused before anything runs:
// a rehearsal never reaches a real model.
import { ConfigError } from "../domain/outcome/errors.js";
import type { OptionLabels } from "../domain/outcome/labels.js";
import { isRehearsal, REHEARSALS } from "../domain/scripted/rehearsals.js";
import { readEnvironment } from "../kernel/environment.js";
import type { RunTurnOptions } from "../plan/options.js";
import type { PromptReader } from "../plan/resolve-options.js";
import type { RunningRehearsal } from "./rehearsal.js";

export type Rehearsed<O> = {
  options: O;
  prompt: PromptReader;
  /** The environment the turn runs with: the rehearsal's throwaway HOME and scripted model. */
  env: NodeJS.ProcessEnv;
  rehearsal: RunningRehearsal | null;
};

type Rehearsable = Pick<
  RunTurnOptions,
  | "dir"
  | "model"
  | "fallbackModel"
  | "session"
  | "continue"
  | "fork"
  | "export"
  | "warm"
  | "idleTimeoutMs"
  | "maxSteps"
  | "attach"
  | "ssh"
>;

/**
 * `name` is the rehearsal asked for (null: none), `labels` how the caller names it and the options
 * it cannot go with (`--rehearse`, `--attach`, `--ssh`; the library's own names). Without a
 * rehearsal the options, prompt and environment pass unchanged.
 */
export async function rehearse<O extends Rehearsable>(
  name: string | null,
  labels: Pick<OptionLabels, "rehearse" | "attach" | "ssh">,
  options: O,
  prompt: PromptReader,
  env: NodeJS.ProcessEnv,
): Promise<Rehearsed<O>> {
  if (name === null) return { options, prompt, env, rehearsal: null };
  const label = labels.rehearse;
  if (!isRehearsal(name))
    throw new ConfigError(
      `${label} takes one of ${Object.keys(REHEARSALS).join(", ")}, not ${JSON.stringify(name)}`,
      "UsageError",
    );
  const remote = options.attach ? `a server named by ${labels.attach}` : options.ssh ? `an ${labels.ssh} host` : null;
  if (remote)
    throw new ConfigError(
      `${label} does not apply to ${remote}: a rehearsal runs the real opencode on this machine against oc-exec's scripted model, and that server or host would use its own; nothing was run, nothing was sent to a model`,
      "UsageError",
    );
  const scripted = await import("./rehearsal.js");
  const rehearsal = await scripted.startRehearsal(name, env);
  return {
    options: scripted.rehearsedOptions(options, rehearsal),
    prompt: scripted.rehearsedPrompt(prompt, name, rehearsal),
    env: rehearsal.env,
    rehearsal,
  };
}

/**
 * Why OC_EXEC_REHEARSE stops a command that cannot be rehearsed yet (a batch, `server start`), or
 * null when no rehearsal was asked for. Running it for real when a job asked for a rehearsal would
 * reach the real provider and pay, so it is refused before anything runs.
 */
export function rehearsalRefused(env: NodeJS.ProcessEnv, what: string): string | null {
  if (readEnvironment(env).rehearse === null) return null;
  return `OC_EXEC_REHEARSE does not apply to ${what} yet: a rehearsal is one turn on oc-exec's scripted model; nothing was run, nothing was sent to a model (unset OC_EXEC_REHEARSE to run it for real)`;
}
