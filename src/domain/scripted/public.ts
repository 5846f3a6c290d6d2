// The scripted model for a user's own pipeline tests: an OpenAI-compatible server on loopback that
// plays the scenario named in the prompt (`scenario:tool`, `scenario:http-429`, …; the table is
// in docs/usage.md), with the opencode configuration that points at it. What oc-exec's own tests
// and --rehearse use, from the library (startScriptedModel) and the CLI (oc-exec scripted-model).
import { providerConfig } from "./hermetic-home.js";
import { startModelServer } from "./model-server.js";

export type ScriptedModel = {
  /** The OpenAI-compatible base URL, e.g. http://127.0.0.1:PORT/v1. */
  url: string;
  /** The model to name: -m scripted/model. */
  model: string;
  /** OPENCODE_CONFIG_CONTENT that makes opencode use it (merge with your own, or pass as is). */
  opencodeConfig: string;
  /** Every chat request it answered, with the scenario it played. */
  requests(): { scenario: string; userText: string }[];
  close(): Promise<void>;
};

export async function startScriptedModel(): Promise<ScriptedModel> {
  const server = await startModelServer();
  return {
    url: server.url,
    model: "scripted/model",
    opencodeConfig: providerConfig(server.url, "scripted", "model"),
    requests: () => server.requests.map((r) => ({ scenario: r.scenario, userText: r.userText })),
    close: () => server.close(),
  };
}
