// What an ACP agent other than opencode needs through the sandbox's proxy, from the one table
// (plan/acp-spec.ts): its provider's hosts, or the base URL's host; its keys masked over TLS only.
import { describe, expect, it } from "vitest";
import { agentNeeds } from "../../src/hosts/sandbox/providers.js";
import { ACP_SANDBOX_NEEDS, resolveAcp } from "../../src/plan/acp-spec.js";

const gemini = ACP_SANDBOX_NEEDS.gemini!;

describe("agentNeeds", () => {
  it.each([
    [
      "the table's host, its keys masked (sent there only)",
      {},
      {
        hosts: ["generativelanguage.googleapis.com:443"],
        credentials: [
          { name: "GEMINI_API_KEY", hosts: ["generativelanguage.googleapis.com:443"], tls: true },
          { name: "GOOGLE_API_KEY", hosts: ["generativelanguage.googleapis.com:443"], tls: true },
        ],
        problems: [],
      },
    ],
    [
      "an https base URL: its host instead, the keys masked for it",
      { GOOGLE_GEMINI_BASE_URL: "https://gateway.example:8443/v1" },
      {
        hosts: ["gateway.example:8443"],
        credentials: [
          { name: "GEMINI_API_KEY", hosts: ["gateway.example:8443"], tls: true },
          { name: "GOOGLE_API_KEY", hosts: ["gateway.example:8443"], tls: true },
        ],
        problems: [],
      },
    ],
    [
      "a plain-HTTP base URL: its host; the keys pass as they are (no header the proxy could fill)",
      { GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:8080" },
      { hosts: ["127.0.0.1:8080"], credentials: [], problems: [] },
    ],
    [
      "a base URL that is not one: a problem, the sandbox is not opened",
      { GOOGLE_GEMINI_BASE_URL: "file:///etc/passwd" },
      { problems: ['GOOGLE_GEMINI_BASE_URL is not an http(s) URL: "file:///etc/passwd"'] },
    ],
  ])("%s", (_, env, expected) => {
    expect(agentNeeds(gemini, env, "--acp gemini")).toMatchObject(expected);
  });

  it("an agent with no host of its own (copilot: a provider of yours only) and no base URL: a problem naming what to set", () => {
    expect(agentNeeds(ACP_SANDBOX_NEEDS.copilot!, {}, "--acp copilot").problems).toEqual([
      "--acp copilot runs in a sandbox with a provider of your own only: set COPILOT_PROVIDER_BASE_URL, or name its host with --allow-host HOST[:PORT]",
    ]);
    expect(
      agentNeeds(ACP_SANDBOX_NEEDS.copilot!, { COPILOT_PROVIDER_BASE_URL: "https://llm.example/v1" }, "--acp copilot"),
    ).toMatchObject({ hosts: ["llm.example:443"], problems: [] });
  });

  it("the built-in names carry their needs; opencode's are its own; a command line has none", () => {
    expect(resolveAcp("gemini", "--acp").sandbox).toBe(gemini);
    expect(resolveAcp("opencode", "--acp").sandbox).toBeNull();
    expect(resolveAcp("claude", "--acp").sandbox).toBe(ACP_SANDBOX_NEEDS.claude);
    expect(resolveAcp("qwen", "--acp").sandbox).toBe(ACP_SANDBOX_NEEDS.qwen);
    expect(resolveAcp("gemini --acp", "--acp").sandbox).toBeNull();
  });
});
