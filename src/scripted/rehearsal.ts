// `--rehearse SCENARIO`: the real opencode against the built-in scripted model, in a throwaway
// HOME and workspace, so a CI author can test how a pipeline handles exit 2, 4 or 124 without a
// provider, a key or a real failure. Nothing of the user's (workspace, config, sessions) is touched,
// and the run says so (a `rehearsal` warning first, the model named rehearsal/scripted).

import { makeHermeticHome, providerConfig } from "./hermetic-home.js";
import { startModelServer } from "./model-server.js";
import { REHEARSALS, type Rehearsal, type RehearsalName } from "./rehearsals.js";

export type RunningRehearsal = {
  env: Record<string, string>;
  dir: string;
  model: string | undefined;
  defaults: Rehearsal["defaults"];
  /** Put in front of the prompt: it selects the scripted model's scenario. */
  promptPrefix: string;
  stop(): Promise<void>;
};

export async function startRehearsal(name: RehearsalName, baseEnv: NodeJS.ProcessEnv): Promise<RunningRehearsal> {
  const rehearsal: Rehearsal = REHEARSALS[name];
  const server = await startModelServer();
  const home = makeHermeticHome(server.url, "oc-exec-rehearsal-");
  // Only PATH and the terminal's settings come from the caller; provider keys and opencode config do not.
  const kept = Object.fromEntries(
    Object.entries(baseEnv).filter(
      ([k, v]) => v !== undefined && ["TERM", "NO_COLOR", "FORCE_COLOR", "LANG"].includes(k),
    ),
  ) as Record<string, string>;
  return {
    env: {
      ...kept,
      ...home.env,
      OPENCODE_CONFIG_CONTENT: providerConfig(server.url, "rehearsal", "scripted"),
      ...rehearsal.env,
    },
    dir: home.workspace,
    model: rehearsal.model,
    defaults: rehearsal.defaults,
    promptPrefix: `scenario:${rehearsal.scenario} `,
    async stop() {
      await server.close();
      home.cleanup();
    },
  };
}
