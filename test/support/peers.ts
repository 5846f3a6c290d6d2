// \`usePeer(NAME)\`: a peer agent's scripted server and throwaway HOME for a test file's lifetime
// (peer-setup.ts says what each is).
import { afterAll, beforeAll } from "vitest";
import { type Peer, type PeerName, startPeer } from "./peer-setup.js";

export function usePeer(name: PeerName): Peer {
  const ctx = { env: {} } as Peer;
  let started: Awaited<ReturnType<typeof startPeer>> | null = null;
  beforeAll(async () => {
    started = await startPeer(name);
    ctx.server = started.server;
    ctx.env = started.env;
  });
  afterAll(async () => {
    await started?.close();
  });
  return ctx;
}
