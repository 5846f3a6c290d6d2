// What every scripted server (OpenAI's, Anthropic's and Gemini's wire formats) does the same way:
// hold the answers a script keeps open (a hang, a delay, a gate file), listen on loopback only, and
// at close end what it holds, so that no test is left waiting on a socket.
import { existsSync } from "node:fs";
import type { Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ModelServer, RecordedRequest, Reply } from "./wire.js";

export type HeldAnswers = {
  /** Keeps the answer open until the client goes or the server closes. */
  hang(res: ServerResponse): void;
  /** Waits out a text reply's delay or gate; false when the client went meanwhile. */
  waitFor(reply: Extract<Reply, { kind: "text" }>, res: ServerResponse): Promise<boolean>;
};

export function heldAnswers(): HeldAnswers & { endAll(): void } {
  const hanging = new Set<ServerResponse>();
  return {
    hang(res) {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
    },
    async waitFor(reply, res) {
      if (!reply.delayMs && !reply.until) return true;
      hanging.add(res);
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      while (reply.until && !existsSync(reply.until) && !res.destroyed) await new Promise((r) => setTimeout(r, 50));
      hanging.delete(res);
      return !res.destroyed;
    },
    endAll() {
      for (const res of hanging) res.destroy();
    },
  };
}

/** Listens on 127.0.0.1 on a free port; `path` is what the base URL ends with (/v1, or nothing). */
export async function listenLoopback(
  server: Server,
  held: ReturnType<typeof heldAnswers>,
  requests: RecordedRequest[],
  path = "",
): Promise<ModelServer> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        held.endAll();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A script's error reply (OpenAI's shape) as another provider words its message: the provider's own
 * sentence for a context overflow (`overflow`), else the script's message, else the status.
 */
export function errorMessage(reply: Extract<Reply, { kind: "http" }>, overflow: string): string {
  const said = (reply.body as { error?: { message?: unknown } } | null)?.error?.message;
  if (typeof said !== "string") return `HTTP ${reply.status}`;
  return /maximum context length/.test(said) ? overflow : said;
}
