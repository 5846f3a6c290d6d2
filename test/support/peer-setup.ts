// Other agents (the project's pinned dev dependencies) against a scripted server of their
// provider's API, for `--acp NAME` (src/domain/scripted/agent-providers.ts says how each is pointed
// at it): a throwaway HOME, the tests' scripts, the project's node_modules/.bin on PATH.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { AGENT_PROVIDERS, type ScriptedAgent } from "../../src/domain/scripted/agent-providers.js";
import type { ModelServer } from "../../src/domain/scripted/model-server.js";
import { testReply } from "./test-scripts.js";

export type Peer = { server: ModelServer; env: Record<string, string> };

export type PeerName = ScriptedAgent;

/** A peer's scripted server and throwaway HOME, for a test file's hooks or the bench; close() ends both. */
export async function startPeer(name: PeerName): Promise<Peer & { home: string; close: () => Promise<void> }> {
  const setup = AGENT_PROVIDERS[name];
  const server = await setup.start(testReply);
  const home = mkdtempSync(join(tmpdir(), `oc-exec-${name}-`));
  setup.home(home, server.url);
  const env = {
    HOME: home,
    PATH: `${resolve("node_modules/.bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    ...setup.env(server.url, home),
  };
  const close = async () => {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  };
  return { server, env, home, close };
}
