// The way in to a server that runs inside the sandbox. The sandbox's network namespace has its own
// loopback and no inbound path, and its seccomp filter forbids the unix sockets a bridge would use,
// so the bridge is started inside the namespace before that filter applies: a socat that listens
// on a unix socket in the sandbox's private temporary directory (a path the host sees too) and
// connects to the server's port on the namespace's loopback, with TCP_NODELAY (relays.ts). On the host, a TCP listener on
// 127.0.0.1 forwards each connection to that socket, so clients see an ordinary local URL.
//
// The tools opencode runs start after the filter: they cannot open the socket. They share the
// namespace's loopback with the server, though: what keeps them out of its API is its password,
// which they cannot learn (server-guard.ts).
import { connect, createServer, type Server } from "node:net";
import { shellQuote } from "./policy.js";

/** The port opencode serve listens on inside the namespace: its own loopback, so any port is free. */
export const INNER_PORT = 4096;

/**
 * The library's command, with the bridge started inside the sandbox before its own script: the
 * command is `bwrap … -- SHELL -c SCRIPT`; it becomes `bwrap … -- SHELL -c 'socat … & exec "$0" "$@"'
 * SHELL -c SCRIPT`. Null when the command does not have that shape (another library release).
 */
export function withInboundBridge(command: string, socket: string, port: number): string | null {
  const at = command.lastIndexOf(" -- ");
  if (at === -1) return null;
  const rest = command.slice(at + 4);
  const shell = /^(\/\S+) -c /.exec(rest)?.[1];
  if (!shell) return null;
  const bridge = `socat UNIX-LISTEN:${socket},fork,mode=600 TCP:127.0.0.1:${port},nodelay >/dev/null 2>&1 & exec "$0" "$@"`;
  return `${command.slice(0, at + 4)}${shell} -c ${shellQuote(bridge)} ${rest}`;
}

/** A TCP listener on 127.0.0.1 (port 0 = any free one) that forwards every connection to the socket. */
export function forwardToSocket(socket: string, port: number): Promise<{ port: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const server: Server = createServer((client) => {
      // Without Nagle's algorithm, as the bridge's socat inside (relays.ts says why).
      client.setNoDelay(true);
      const inner = connect({ path: socket });
      client.pipe(inner).pipe(client);
      const end = () => {
        client.destroy();
        inner.destroy();
      };
      client.once("error", end);
      inner.once("error", end);
      client.once("close", end);
      inner.once("close", end);
    });
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      resolve({
        port: typeof address === "object" && address ? address.port : port,
        close: () => server.close(),
      });
    });
  });
}
