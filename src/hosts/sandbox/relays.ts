// The sandbox's relays without Nagle's algorithm. Every model call of a sandboxed opencode crosses
// two socat relays (one inside the namespace, one on the host) and the library's proxy front end,
// each with a TCP end. A relay copies what it reads in 8 KiB writes; on a TCP socket with Nagle's
// algorithm, a short write waits until the one before it is acknowledged, and the receiver delays
// that acknowledgement by up to 40 ms while it waits for the rest. A request body of more than one
// write (opencode's first request of a turn is ~31 KB) and a streamed response of several chunks
// each lost ~40 ms to it, every model call: measured 44 ms against 2 ms through the same relays
// with TCP_NODELAY (docs/performance.md). Nothing is switched off: the same bytes take the same
// path, written at once.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { accessSync, constants } from "node:fs";
import type { Socket } from "node:net";
import { join } from "node:path";
import { ownPackage } from "../../kernel/package-root.js";

/**
 * The library spawns socat (its host relay, and its relay inside the sandbox) by the path it is
 * given: this package's wrapper, which adds `nodelay` to socat's TCP addresses. Null (the library
 * then runs socat itself) when the wrapper is missing or not executable, as in a copy of the
 * package that lost its modes: slower model calls, the same sandbox.
 */
export function socatWithoutDelay(): string | null {
  const own = ownPackage();
  if (!own) return null;
  const path = join(own.dir, "bin", "socat-nodelay");
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return null;
  }
}

/**
 * The library's proxy front end (a node:net server in this process, on 127.0.0.1:port) accepts
 * with Nagle's algorithm on, and offers no way to change it: every connection it accepts gets
 * TCP_NODELAY here, through Node's channel for accepted connections. Returns the way to stop.
 */
export function noDelayOnAccept(port: number): () => void {
  const onSocket = (message: unknown) => {
    const socket = (message as { socket?: Socket }).socket;
    if (socket?.localPort === port) socket.setNoDelay(true);
  };
  subscribe("net.server.socket", onSocket);
  return () => unsubscribe("net.server.socket", onSocket);
}
