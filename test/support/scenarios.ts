// The standard scenarios: what each one sends the scripted model server and how it is set up.
// Shared by the fixture recorder and the compatibility matrix.
import { createServer } from "node:net";
import { providerConfig } from "../../src/domain/scripted/hermetic-home.js";
import type { ChatRequest, Reply } from "../../src/domain/scripted/model-server.js";

export type Scenario = {
  prompt: string;
  /** The class oc-exec must report, whatever the opencode release. */
  expect: string;
  env?: (serverUrl: string) => Record<string, string>;
  args?: { model?: string; session?: string; agent?: string };
  workspaceFiles?: Record<string, string>;
  slow?: boolean;
  script?: (body: ChatRequest) => Reply;
};

export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export const SCENARIOS: Record<string, Scenario> = {
  plain: { expect: "success", prompt: "scenario:plain say hello" },
  tool: { expect: "success", prompt: "scenario:tool run echo" },
  write: { expect: "success", prompt: "scenario:write a note" },
  "permission-ask": {
    expect: "approval_denied",
    prompt: "scenario:tool run echo",
    env: () => ({ OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) }),
  },
  "external-directory": { expect: "approval_denied", prompt: "scenario:read-outside read /etc/hostname" },
  "api-401": { expect: "api_error", prompt: "scenario:http-401" },
  "api-429": { expect: "api_error", prompt: "scenario:http-429" },
  "context-overflow": { expect: "context_overflow", prompt: "scenario:context-overflow" },
  length: { expect: "agent_error", prompt: "scenario:length" },
  "unknown-model": { expect: "config_error", prompt: "scenario:plain", args: { model: "fake/nope" } },
  "missing-credentials": {
    expect: "config_error",
    prompt: "scenario:plain",
    args: { model: "anthropic/claude-sonnet-4-5" },
    env: () => ({ ANTHROPIC_API_KEY: "" }),
  },
  "invalid-config": {
    expect: "config_error",
    prompt: "scenario:plain",
    env: () => ({ OPENCODE_CONFIG_CONTENT: JSON.stringify({ provider: 5 }) }),
  },
  "malformed-project-config": {
    expect: "config_error",
    prompt: "scenario:plain",
    workspaceFiles: { "opencode.json": '{"model": ' },
  },
  "session-not-found": { expect: "config_error", prompt: "scenario:plain", args: { session: "ses_doesnotexist" } },
  "agent-fallback": { expect: "success", prompt: "scenario:plain", args: { agent: "nosuchagent" } },
  "api-500": {
    expect: "api_error",
    prompt: "scenario:plain",
    slow: true,
    script: () => ({
      kind: "http",
      status: 500,
      body: { error: { message: "The server had an error while processing your request." } },
    }),
  },
  // A model that calls a tool the configuration does not offer (opencode's own config denies edit;
  // oc-exec passes no policy), gets opencode's `invalid` tool back, then does the work with bash.
  "unavailable-tool": {
    expect: "success",
    prompt: "scenario:unavailable-tool fix it",
    env: (url) => ({
      OPENCODE_CONFIG_CONTENT: JSON.stringify({ ...JSON.parse(providerConfig(url)), permission: { edit: "deny" } }),
    }),
  },
  "connection-refused": { expect: "api_error", prompt: "scenario:plain", slow: true, env: () => ({}) },
};
