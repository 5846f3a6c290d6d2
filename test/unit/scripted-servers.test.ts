// The scripted model servers outlive what their clients do to a request: one cut off mid-body (a
// stopped turn, a sandbox's proxy closing the connection) or one that is not JSON is dropped or
// answered 400, never an unhandled rejection in the test run.
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { startAnthropicServer } from "../../src/domain/scripted/anthropic-server.js";
import { startGeminiServer } from "../../src/domain/scripted/gemini-server.js";
import { startModelServer } from "../../src/domain/scripted/model-server.js";
import { startResponsesServer } from "../../src/domain/scripted/responses-server.js";

const servers = {
  openai: [startModelServer, "/v1/chat/completions"],
  anthropic: [startAnthropicServer, "/v1/messages"],
  gemini: [startGeminiServer, "/v1beta/models/m:generateContent"],
  responses: [startResponsesServer, "/v1/responses"],
} as const;

/** A request whose body stops after 10 of the 100 bytes it announced; the socket then closes. */
function cutOff(url: string, path: string): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`,
      );
      setImmediate(() => socket.destroy());
    });
    socket.on("close", () => resolve());
  });
}

describe("the scripted servers, given requests they cannot answer", () => {
  it.each(Object.entries(servers))(
    "%s: a body cut off is dropped; then one that is not JSON: 400",
    async (_name, [start, path]) => {
      const server = await start();
      try {
        await cutOff(server.url, path);
        // Still serving after it: a body that is not JSON is answered 400.
        const bad = await fetch(new URL(path, server.url), { method: "POST", body: "not json" });
        expect(bad.status).toBe(400);
        await bad.arrayBuffer();
      } finally {
        await server.close();
      }
    },
  );
});
