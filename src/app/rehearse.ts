// The one wiring of a rehearsal (--rehearse, OC_EXEC_REHEARSE, the library's `rehearse`), shared by
// the CLI's turn and the library's runTurn: the name checked, the scripted model started (loaded
// only then), the options pointed at it and the prompt given its scenario and warning. What cannot
// be rehearsed offline (a server named by --attach, an --ssh host) is refused before anything runs:
// a rehearsal never reaches a real model.
import { ConfigError } from "../domain/outcome/errors.js";
import type { OptionLabels } from "../domain/outcome/labels.js";
import { isRehearsal, REHEARSALS } from "../domain/scripted/rehearsals.js";
import { readEnvironment } from "../kernel/environment.js";
import { ACP_AGENTS, resolveAcp } from "../plan/acp-spec.js";
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
  | "acp"
>;

/**
 * `name` is the rehearsal asked for (null: none), `labels` how the caller names it and the options
 * it cannot go with (`--rehearse`, `--attach`, `--ssh`; the library's own names). Without a
 * rehearsal the options, prompt and environment pass unchanged.
 */
export async function rehearse<O extends Rehearsable>(
  name: string | null,
  labels: Pick<OptionLabels, "rehearse" | "attach" | "ssh" | "acp">,
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
  // Through an ACP agent: a built-in one is pointed at a scripted server of its provider's API; a
  // command line of the caller's cannot be, and would reach whatever model it is set up for.
  const acpAsked = options.acp ?? readEnvironment(env).acp;
  const acp = acpAsked ? resolveAcp(acpAsked, options.acp !== undefined ? labels.acp : "OC_EXEC_ACP") : null;
  // (The scripted servers load only now, as for every rehearsal.)
  const scripted = await import("./rehearsal.js");
  const agent = acp && acp.argv !== null && scripted.isScriptedAgent(acp.name) ? acp.name : null;
  if (acp && acp.argv !== null && agent === null && acp.name !== "opencode")
    throw new ConfigError(
      `${label} cannot point ${acp.argv.join(" ")} at the scripted model: a rehearsal runs opencode or a built-in agent (${Object.keys(ACP_AGENTS).join(", ")}); nothing was run, nothing was sent to a model`,
      "UsageError",
    );
  const rehearsal = await scripted.startRehearsal(name, env, agent);
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
