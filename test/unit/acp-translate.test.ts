// ACP session updates into the lines `opencode run --format json` prints: pure, no agent.
import { describe, expect, it } from "vitest";
import { AcpTranslator } from "../../src/domain/events/acp-translate.js";

const strip = (lines: object[]) =>
  lines.map((l) => {
    const { timestamp: _t, sessionID: _s, ...rest } = l as Record<string, unknown>;
    const part = rest.part as Record<string, unknown> | undefined;
    if (part) {
      const { id: _id, ...p } = part;
      rest.part = p;
    }
    return rest;
  });

describe("AcpTranslator", () => {
  it("a tool call (as opencode acp sends it), chunks of text, the prompt's response", () => {
    const t = new AcpTranslator("ses_1");
    const lines = [
      ...t.update({ sessionUpdate: "available_commands_update", availableCommands: [] }),
      ...t.update({
        sessionUpdate: "tool_call",
        toolCallId: "c1",
        title: "bash",
        kind: "execute",
        status: "pending",
        rawInput: { cwd: "/w" },
      }),
      ...t.update({
        sessionUpdate: "tool_call_update",
        toolCallId: "c1",
        status: "in_progress",
        title: "echo hi",
        rawInput: { command: "echo hi", cwd: "/w" },
      }),
      ...t.update({
        sessionUpdate: "tool_call_update",
        toolCallId: "c1",
        status: "completed",
        title: "echo hi",
        rawOutput: { output: "hi\n" },
      }),
      ...t.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "The command" } }),
      ...t.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: " printed hi." } }),
      ...t.update({ sessionUpdate: "usage_update", used: 10, size: 100, cost: { amount: 0.25, currency: "USD" } }),
      ...t.finish("end_turn", { inputTokens: 200, outputTokens: 6, totalTokens: 206 }),
    ];
    expect(strip(lines)).toEqual([
      { type: "step_start", part: { type: "step-start" } },
      { type: "tool_use", part: { type: "tool", callID: "c1", tool: "bash", state: { status: "running", input: {} } } },
      {
        type: "tool_use",
        part: {
          type: "tool",
          callID: "c1",
          tool: "bash",
          state: { status: "completed", input: { command: "echo hi" }, output: "hi\n", title: "echo hi" },
        },
      },
      { type: "text", part: { type: "text", text: "The command printed hi." } },
      {
        type: "step_finish",
        part: {
          type: "step-finish",
          reason: "stop",
          tokens: { input: 200, output: 6, reasoning: 0, cache: { read: 0, write: 0 }, total: 206 },
          cost: 0.25,
        },
      },
    ]);
  });

  it("a refused permission, and errors: opencode's named ones, an HTTP status as the code, plain text", () => {
    const t = new AcpTranslator("ses_1");
    expect(
      strip(
        t.refused({
          toolCallId: "c2",
          kind: "other",
          rawInput: { filepath: "/etc/x", parentDir: "/etc" },
          locations: [{ path: "/etc/x" }],
        }),
      ),
    ).toEqual([
      { type: "step_start", part: { type: "step-start" } },
      { type: "permission_rejected", permission: "external_directory", patterns: ["/etc/x"], callID: "c2" },
    ]);
    expect(strip(t.refused({ toolCallId: "c3", kind: "execute", rawInput: { command: "rm -rf /" } }))).toEqual([
      { type: "permission_rejected", permission: "bash", patterns: ["rm -rf /"], callID: "c3" },
    ]);
    expect(
      strip(t.error({ code: -32603, message: "Internal error: bad key", data: { errorName: "APIError" } })),
    ).toEqual([{ type: "error", error: { name: "APIError", data: { message: "bad key" } } }]);
    expect(strip(t.error({ code: 429, message: "Too many requests" }))).toEqual([
      { type: "error", error: { name: "APIError", data: { message: "Too many requests", statusCode: 429 } } },
    ]);
    expect(strip(t.error({ code: -32603, message: "boom" }))).toEqual([
      { type: "error", error: { name: "UnknownError", data: { message: "boom" } } },
    ]);
    expect(strip(t.finish("max_tokens", null)).at(-1)).toMatchObject({ part: { reason: "length" } });
  });
});
