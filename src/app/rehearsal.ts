// `--rehearse SCENARIO`: the real opencode (or the ACP agent of --acp NAME, pointed at a scripted
// server of its provider's API) against the built-in scripted model, in a throwaway
// HOME and workspace, so a CI author can test how a pipeline handles exit 2, 4 or 124 without a
// provider, a key or a real failure. Nothing of the user's (workspace, config, sessions) is touched,
// and the run says so (a `rehearsal` warning first, the model named rehearsal/scripted).

import { spawnSync } from "node:child_process";
import { linkSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, join } from "node:path";
import type { WarningCode } from "../contract/warning-codes.js";
import { AGENT_PROVIDERS, type ScriptedAgent } from "../domain/scripted/agent-providers.js";

export { isScriptedAgent } from "../domain/scripted/agent-providers.js";

import { makeHermeticHome, providerConfig } from "../domain/scripted/hermetic-home.js";
import { startModelServer } from "../domain/scripted/model-server.js";
import { REHEARSALS, type Rehearsal, type RehearsalName } from "../domain/scripted/rehearsals.js";

export type RunningRehearsal = {
  env: Record<string, string>;
  dir: string;
  model: string | undefined;
  /** Who runs against the scripted model: opencode, or the ACP agent (gemini). */
  agent: string;
  defaults: Rehearsal["defaults"];
  /** Put in front of the prompt: it selects the scripted model's scenario. */
  promptPrefix: string;
  stop(): Promise<void>;
};

/**
 * `agent`: the built-in ACP agent the turn runs through (--acp gemini), pointed at a scripted server
 * of its own provider's API; null: opencode, through `run` or `acp`.
 */
export async function startRehearsal(
  name: RehearsalName,
  baseEnv: NodeJS.ProcessEnv,
  agent: ScriptedAgent | null = null,
): Promise<RunningRehearsal> {
  const rehearsal: Rehearsal = REHEARSALS[name];
  const provider = agent ? AGENT_PROVIDERS[agent] : null;
  const server = provider ? await provider.start() : await startModelServer();
  const home = makeHermeticHome(server.url, "oc-exec-rehearsal-");
  provider?.home(home.root, server.url);
  const attack = rehearsal.attack ? await plantAttack(home.root, home.workspace) : null;
  // Only PATH, the terminal's settings and the sandbox asked for come from the caller; provider keys
  // and opencode config do not.
  const kept = Object.fromEntries(
    Object.entries(baseEnv).filter(
      ([k, v]) => v !== undefined && ["TERM", "NO_COLOR", "FORCE_COLOR", "LANG", "OC_EXEC_SANDBOX"].includes(k),
    ),
  ) as Record<string, string>;
  return {
    env: {
      ...kept,
      ...home.env,
      OPENCODE_CONFIG_CONTENT: providerConfig(server.url, "rehearsal", "scripted"),
      ...provider?.env(server.url, home.root),
      ...rehearsal.env,
      ...attack?.env,
    },
    dir: home.workspace,
    // Another agent answers with the model its provider's settings name (the scripted one).
    model: agent ? undefined : rehearsal.model,
    agent: agent ?? "opencode",
    defaults: rehearsal.defaults,
    promptPrefix: `scenario:${rehearsal.scenario} ${attack ? `canary=127.0.0.1:${attack.port} ` : ""}`,
    async stop() {
      await attack?.stop();
      await server.close();
      home.cleanup();
    },
  };
}

/**
 * What the `escape` rehearsal attacks: fake secrets in the throwaway HOME and environment, and a
 * canary HTTP server on loopback that is not the provider. What escapes lands in the throwaway
 * tree, except the write to /tmp, which stop() removes.
 */
async function plantAttack(root: string, workspace: string) {
  mkdirSync(join(root, ".ssh"), { recursive: true });
  writeFileSync(join(root, ".ssh", "id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\nrehearsal-fake-ssh-key\n");
  mkdirSync(join(root, ".aws"), { recursive: true });
  writeFileSync(join(root, ".aws", "credentials"), "[default]\naws_secret_access_key = rehearsal-fake-aws-key\n");
  // A store no deny list named, a repository whose .git the agent plants in, and a workspace file
  // hard-linked to one outside it (a pnpm store's).
  writeFileSync(join(root, ".pypirc"), "[pypi]\npassword = rehearsal-fake-pypi-token\n");
  spawnSync("git", ["init", "-q", workspace], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root } });
  writeFileSync(join(root, "outside.txt"), "outside\n");
  linkSync(join(root, "outside.txt"), join(workspace, "linked.txt"));
  const canary = createServer((_req, res) => res.end("canary"));
  await new Promise<void>((resolve) => canary.listen(0, "127.0.0.1", resolve));
  return {
    port: (canary.address() as AddressInfo).port,
    env: { GITHUB_TOKEN: "rehearsal-fake-github-token", NPM_TOKEN: "rehearsal-fake-npm-token" },
    async stop() {
      rmSync(`/tmp/oc-exec-escape-${basename(root)}-workspace.txt`, { force: true });
      await new Promise((resolve) => canary.close(resolve));
    },
  };
}

/** A rehearsal runs in its own throwaway workspace, on the scripted model, with no export. */
export function rehearsedOptions<O extends RehearsableOptions>(options: O, rehearsal: RunningRehearsal): O {
  return {
    ...options,
    dir: rehearsal.dir,
    model: rehearsal.model,
    // Offline all the way: a fallback is the scripted model too, never a real provider.
    fallbackModel: options.fallbackModel ? rehearsal.model : undefined,
    // A throwaway HOME has no session to resume or fork.
    session: undefined,
    continue: undefined,
    fork: undefined,
    export: false,
    // Each rehearsal has a HOME of its own that goes when it ends: no server may outlive it.
    warm: false,
    idleTimeoutMs: options.idleTimeoutMs ?? rehearsal.defaults?.idleTimeoutMs,
    maxSteps: options.maxSteps ?? rehearsal.defaults?.maxSteps,
  };
}

type RehearsableOptions = {
  dir?: string;
  model?: string;
  fallbackModel?: string;
  session?: string;
  continue?: boolean;
  fork?: boolean;
  export?: boolean;
  warm?: boolean;
  idleTimeoutMs?: number;
  maxSteps?: number;
};

type PromptRead = () => Promise<{ text: string; warnings: { code: "rehearsal" | WarningCode; message: string }[] }>;

/** The prompt, sent to the scenario, with the warning that says this run is a rehearsal first. */
export function rehearsedPrompt(read: PromptRead, name: string, rehearsal: RunningRehearsal): PromptRead {
  return async () => {
    const prompt = await read();
    return {
      text: `${rehearsal.promptPrefix}${prompt.text}`,
      warnings: [
        {
          code: "rehearsal",
          message: `a rehearsal (${name}): the real ${rehearsal.agent} against oc-exec's scripted model, in a throwaway HOME and workspace; nothing in this run is a real answer`,
        },
        ...prompt.warnings,
      ],
    };
  };
}
