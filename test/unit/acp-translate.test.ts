// ACP session updates into the lines `opencode run --format json` prints: pure, no agent.
import { describe, expect, it } from "vitest";
import { FLAG_LABELS } from "../../src/cli/flag-table.js";
import { AcpTranslator, permissionOf, tolerantLine, usageOf } from "../../src/domain/events/acp-translate.js";
import { Normalizer } from "../../src/domain/events/normalize.js";
import { fileChangesOf } from "../../src/domain/events/tool-files.js";
import { buildPolicy, policyAction } from "../../src/domain/opencode/permissions.js";
import { classifyOutcome, type TurnEnd } from "../../src/domain/outcome/classify.js";

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

describe("an ACP permission request, answered by the caller's policy", () => {
  const request = (kind: string, rawInput: Record<string, unknown>, locations: string[] = []) => ({
    toolCallId: "call_1",
    kind,
    rawInput,
    locations: locations.map((path) => ({ path })),
  });

  it("names the key and what the call touches, for each ACP tool kind", () => {
    const cases: [ReturnType<typeof request>, string, string | null][] = [
      [request("execute", { command: "npm test" }), "bash", "npm test"],
      [request("execute", { command: ["git", "status"] }), "bash", "git status"],
      [request("edit", { filePath: "src/a.ts" }), "edit", "src/a.ts"],
      [request("delete", { path: "old.txt" }), "edit", "old.txt"],
      [request("move", {}, ["from.txt"]), "edit", "from.txt"],
      [request("read", { file_path: "README.md" }), "read", "README.md"],
      [request("search", { pattern: "TODO" }), "grep", "TODO"],
      [request("fetch", { url: "https://example.com/x" }), "webfetch", "https://example.com/x"],
      [request("think", {}), "think", null],
      [request("other", { parentDir: "/etc", filepath: "/etc/hostname" }), "external_directory", "/etc"],
      [request("other", {}), "other", null],
    ];
    for (const [call, key, subject] of cases) expect(permissionOf(call)).toMatchObject({ key, subject });
  });

  it("the policy's word: a whole key, the last matching pattern, nothing when it does not say", () => {
    const policy = buildPolicy(
      ["read", "bash:npm *", "webfetch:https://example.com/*"],
      ["bash:npm publish*"],
      FLAG_LABELS,
    );
    if (policy === null || "problem" in policy) throw new Error("no policy");
    const say = (key: string, subject: string | null) => policyAction(policy.value, key, subject);
    expect(say("read", "/anything")).toBe("allow");
    expect(say("bash", "npm test")).toBe("allow");
    expect(say("bash", "npm publish --access public")).toBe("deny");
    expect(say("bash", "rm -rf /")).toBe("deny");
    expect(say("bash", null)).toBe("deny");
    expect(say("webfetch", "https://example.com/docs")).toBe("allow");
    expect(say("webfetch", "https://example.com.evil.test/")).toBe("deny");
    // An allow-list denies every other key it knows; a key it does not know, it leaves alone.
    expect(say("edit", "a.ts")).toBe("deny");
    expect(say("think", null)).toBeNull();
    // Only --deny: what it does not name is left to --auto.
    const denyOnly = buildPolicy([], ["bash:rm *"], FLAG_LABELS);
    if (denyOnly === null || "problem" in denyOnly) throw new Error("no policy");
    expect(policyAction(denyOnly.value, "bash", "rm -rf build")).toBe("deny");
    expect(policyAction(denyOnly.value, "bash", "ls")).toBeNull();
    expect(policyAction("deny", "read", "x")).toBe("deny");
    // Regular-expression characters in a pattern are literal.
    expect(policyAction({ bash: { "a.b": "allow" } }, "bash", "axb")).toBeNull();
  });
});

describe("what an agent tells besides updates", () => {
  it("usage: the prompt response's (opencode), else gemini-cli's _meta.quota.token_count, else none", () => {
    expect(usageOf({ stopReason: "end_turn", usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 } })).toEqual({
      inputTokens: 5,
      outputTokens: 2,
      totalTokens: 7,
    });
    expect(
      usageOf({ stopReason: "end_turn", _meta: { quota: { token_count: { input_tokens: 350, output_tokens: 26 } } } }),
    ).toEqual({ inputTokens: 350, outputTokens: 26, totalTokens: 376 });
    expect(usageOf({ stopReason: "end_turn" })).toBeNull();
  });

  it("an execute call without raw input: its title is the command (gemini-cli)", () => {
    expect(permissionOf({ toolCallId: "c", kind: "execute", title: "npm test" })).toMatchObject({
      key: "bash",
      subject: "npm test",
      patterns: ["npm test"],
    });
    const t = new AcpTranslator("ses_1");
    t.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } });
    const lines = t.update({
      sessionUpdate: "tool_call",
      toolCallId: "c",
      kind: "execute",
      title: "npm test",
      status: "in_progress",
    });
    expect(lines.at(-1)).toMatchObject({
      type: "tool_use",
      part: { tool: "bash", state: { input: { command: "npm test" } } },
    });
  });

  it("a provider's JSON error body passed on as the message: its own message", () => {
    const [line] = new AcpTranslator("ses_1").error({
      code: 401,
      message: '{"error":{"code":401,"message":"API key not valid","status":"UNAUTHENTICATED"}}',
    });
    expect(line).toMatchObject({
      error: { name: "APIError", data: { message: "API key not valid", statusCode: 401 } },
    });
  });
});

describe("how an ACP turn ends, classified as opencode's are", () => {
  const classOf = (stopReason: string) => {
    const t = new AcpTranslator("ses_1");
    const lines = [
      ...t.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "partial" } }),
      ...t.finish(stopReason, null),
    ];
    const normalizer = new Normalizer({ workspace: "/w", session: null, maxOutputBytes: 1000 }, () => {});
    for (const line of lines) normalizer.stdoutLine(JSON.stringify(line));
    normalizer.finish();
    const outcome = classifyOutcome(normalizer.facts, {
      stop: null,
      launchError: null,
      process: null,
      lost: null,
    } as unknown as TurnEnd);
    return [outcome.class, outcome.error?.name ?? null];
  };
  it("end_turn: success; max_tokens: cut off; refusal and max_turn_requests: the agent's own end, agent_error", () => {
    expect(classOf("end_turn")).toEqual(["success", null]);
    expect(classOf("max_tokens")).toEqual(["agent_error", "OutputLengthError"]);
    expect(classOf("refusal")).toEqual(["agent_error", "AgentRefused"]);
    expect(classOf("max_turn_requests")).toEqual(["agent_error", "AgentTurnLimit"]);
  });
});

describe("an agent that bends ACP's schema", () => {
  it("a usage_update whose used is null keeps its cost; other lines pass as they came", () => {
    const line = JSON.stringify({
      jsonrpc: "2.0",
      method: "session/update",
      params: {
        sessionId: "s",
        update: { sessionUpdate: "usage_update", used: null, size: 200000, cost: { amount: 0.5, currency: "USD" } },
      },
    });
    expect(JSON.parse(tolerantLine(line)).params.update).toEqual({
      sessionUpdate: "usage_update",
      used: 0,
      size: 200000,
      cost: { amount: 0.5, currency: "USD" },
    });
    for (const same of ['{"jsonrpc":"2.0","id":1,"result":{}}', "not json at all", '{"usage_update": [1,'])
      expect(tolerantLine(same)).toBe(same);
  });

  it("an unnamed error that says the input does not fit is a context overflow", () => {
    const [line] = new AcpTranslator("s").error({ code: -32603, message: "Internal error: Prompt is too long" });
    expect(line).toMatchObject({ error: { name: "ContextOverflowError", data: { message: "Prompt is too long" } } });
    const [other] = new AcpTranslator("s").error({ code: -32603, message: "Internal error: something else" });
    expect(other).toMatchObject({ error: { name: "UnknownError" } });
  });
});

describe("Qwen Code's errors", () => {
  it("−32603 with the provider's status and text in data.details: that status, that text", () => {
    const [line] = new AcpTranslator("s").error({
      code: -32603,
      message: "Internal error",
      data: { details: "401 Incorrect API key provided: sk-x" },
    });
    expect(line).toMatchObject({
      error: { name: "APIError", data: { message: "Incorrect API key provided: sk-x", statusCode: 401 } },
    });
  });
});

describe("codex-acp", () => {
  it("a command as codex sends it: the shell's script as the command, its bookkeeping left out, the output", () => {
    const t = new AcpTranslator("s");
    const command = ["/bin/bash", "-lc", "echo hi"];
    const ids = { call_id: "call_1", turn_id: "t1", cwd: "/w", parsed_cmd: [{ type: "unknown", cmd: "echo hi" }] };
    const lines = [
      ...t.update({
        sessionUpdate: "tool_call",
        toolCallId: "call_1",
        title: "echo hi",
        kind: "execute",
        status: "in_progress",
        rawInput: { ...ids, process_id: "42", started_at_ms: 1, command, source: "unified_exec_startup" },
      }),
      ...t.update({
        sessionUpdate: "tool_call_update",
        toolCallId: "call_1",
        status: "completed",
        rawOutput: { ...ids, command, stdout: "hi\n", stderr: "", aggregated_output: "hi\n", exit_code: 0 },
      }),
    ];
    expect(strip(lines).at(-1)).toEqual({
      type: "tool_use",
      part: {
        type: "tool",
        callID: "call_1",
        tool: "bash",
        state: { status: "completed", input: { command: "echo hi" }, output: "hi\n", title: "bash" },
      },
    });
  });

  it("its permission request names the shell's script; words that run no script are joined", () => {
    const request = (command: string[]) => ({ toolCallId: "c", kind: "execute", rawInput: { command } });
    expect(permissionOf(request(["/bin/bash", "-lc", "echo fixed > fixed.txt"]))).toMatchObject({
      key: "bash",
      subject: "echo fixed > fixed.txt",
      patterns: ["echo fixed > fixed.txt"],
    });
    expect(permissionOf(request(["sh", "-c", "npm test"])).subject).toBe("npm test");
    expect(permissionOf(request(["bash", "-lc", "a", "b"])).subject).toBe("bash -lc a b");
    expect(permissionOf(request(["python", "-c", "print(1)"])).subject).toBe("python -c print(1)");
  });

  it("its edit names each file and how it changes", () => {
    const changes = {
      "/w/notes.txt": { type: "add", content: "hello\n" },
      "/w/old.txt": { type: "delete" },
      "/w/src/a.ts": { type: "update", unified_diff: "" },
    };
    const t = new AcpTranslator("s");
    t.update({
      sessionUpdate: "tool_call",
      toolCallId: "e",
      title: "Edit /w/notes.txt",
      kind: "edit",
      rawInput: { changes },
    });
    const [done] = t.update({
      sessionUpdate: "tool_call_update",
      toolCallId: "e",
      status: "completed",
      rawOutput: { stdout: "Success. Updated the following files:\nA notes.txt\n", success: true, changes },
    });
    expect(done).toMatchObject({
      part: {
        tool: "edit",
        state: { input: { changes }, output: "Success. Updated the following files:\nA notes.txt\n" },
      },
    });
    expect(fileChangesOf("/w", "edit", { changes }, null)).toEqual([
      { path: "notes.txt", change: "added" },
      { path: "old.txt", change: "deleted" },
      { path: "src/a.ts", change: "modified" },
    ]);
  });

  it("its errors: the status from codex_error_info or its message, the provider's text, an overflow by name", () => {
    const error = (data: Record<string, unknown>) =>
      strip(new AcpTranslator("s").error({ code: -32603, message: "Internal error", data }))[0];
    expect(
      error({
        message:
          "unexpected status 401 Unauthorized: Incorrect API key provided: sk-x, url: http://127.0.0.1:1/v1/responses",
        codex_error_info: "other",
      }),
    ).toEqual({
      type: "error",
      error: { name: "APIError", data: { message: "Incorrect API key provided: sk-x", statusCode: 401 } },
    });
    expect(
      error({
        message: "exceeded retry limit, last status: 429 Too Many Requests",
        codex_error_info: { response_too_many_failed_attempts: { http_status_code: 429 } },
      }),
    ).toEqual({
      type: "error",
      error: {
        name: "APIError",
        data: { message: "exceeded retry limit, last status: 429 Too Many Requests", statusCode: 429 },
      },
    });
    expect(
      error({
        message: "Codex ran out of room in the model's context window. Start a new thread.",
        codex_error_info: "context_window_exceeded",
      }),
    ).toEqual({
      type: "error",
      error: {
        name: "ContextOverflowError",
        data: { message: "Codex ran out of room in the model's context window. Start a new thread." },
      },
    });
    expect(error({ message: "not logged in", codex_error_info: "unauthorized" })).toMatchObject({
      error: { name: "APIError", data: { statusCode: 401 } },
    });
    expect(error({ message: "the sandbox failed", codex_error_info: "sandbox_error" })).toEqual({
      type: "error",
      error: { name: "UnknownError", data: { message: "the sandbox failed" } },
    });
  });
});

describe("Copilot CLI", () => {
  /** The turn's lines through the normalizer and classifier: its events and its class. */
  const judged = (lines: object[]) => {
    const events: Record<string, unknown>[] = [];
    const normalizer = new Normalizer({ workspace: "/w", session: null, maxOutputBytes: 1000 }, (e) =>
      events.push(e as Record<string, unknown>),
    );
    for (const line of lines) normalizer.stdoutLine(JSON.stringify(line));
    normalizer.finish();
    const outcome = classifyOutcome(normalizer.facts, {
      stop: null,
      launchError: null,
      process: null,
      lost: null,
    } as unknown as TurnEnd);
    return { events, outcome };
  };
  const chunk = (text: string) => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });

  it("a refused call fails with {message, code: rejected}: the call denied, paired with its permission; a done call's output is its {content}", () => {
    const t = new AcpTranslator("s", "Copilot");
    const call = { toolCallId: "c1", title: "Print hi", kind: "execute", status: "pending" };
    const lines = [
      ...t.update({ sessionUpdate: "tool_call", ...call, rawInput: { command: "echo hi", description: "Print hi" } }),
      ...t.refused({ ...call, rawInput: { command: "echo hi", commands: ["echo hi"] } }),
      ...t.update({
        sessionUpdate: "tool_call_update",
        toolCallId: "c1",
        status: "failed",
        rawOutput: { message: "The user rejected this tool call.", code: "rejected" },
      }),
      ...t.update(chunk("Info: Operation cancelled by user")),
      ...t.finish("end_turn", { inputTokens: 150, outputTokens: 20, totalTokens: 170 }),
    ];
    const { events, outcome } = judged(lines);
    expect(events.filter((e) => e.type === "tool" || e.type === "permission.denied")).toMatchObject([
      { type: "tool", tool: "bash", status: "denied", error: "The user rejected this tool call." },
      { type: "permission.denied", permission: "bash", patterns: ["echo hi"], tool: "bash", call_id: "c1" },
    ]);
    expect(outcome.class).toBe("approval_denied");

    const done = new AcpTranslator("s", "Copilot");
    done.update({ sessionUpdate: "tool_call", toolCallId: "c2", title: "Creating a.txt", kind: "edit" });
    expect(
      strip(
        done.update({
          sessionUpdate: "tool_call_update",
          toolCallId: "c2",
          status: "completed",
          content: [{ type: "diff", path: "a.txt", oldText: "", newText: "x" }],
          rawOutput: { content: "Created file /w/a.txt with 1 characters", detailedContent: "diff --git ..." },
        }),
      ).at(-1),
    ).toMatchObject({
      part: { tool: "edit", state: { status: "completed", output: "Created file /w/a.txt with 1 characters" } },
    });
    // Its create tool makes a file that must not exist yet: added; its edit changes one.
    expect(fileChangesOf("/w", "edit", { path: "a.txt", file_text: "x" }, null)).toEqual([
      { path: "a.txt", change: "added" },
    ]);
    expect(fileChangesOf("/w", "edit", { path: "/w/a.txt", old_str: "x", new_str: "y" }, null)).toEqual([
      { path: "a.txt", change: "modified" },
    ]);
  });

  it("its notices are messages of their own; an Error notice last in a turn that tells no usage is the turn's failure", () => {
    const t = new AcpTranslator("s", "Copilot");
    const lines = [
      ...t.update(chunk("Info: Request failed due to a transient API error. Retrying...")),
      ...t.update(chunk("Info: Request failed due to a transient API error. Retrying...")),
      ...t.update(
        chunk(
          "Error: Authentication failed with provider at http://127.0.0.1:1/v1 (HTTP 401).\n  Check your COPILOT_PROVIDER_API_KEY.",
        ),
      ),
      ...t.finish("end_turn", null),
    ];
    expect(strip(lines)).toEqual([
      { type: "step_start", part: { type: "step-start" } },
      { type: "text", part: { type: "text", text: "Info: Request failed due to a transient API error. Retrying..." } },
      { type: "text", part: { type: "text", text: "Info: Request failed due to a transient API error. Retrying..." } },
      {
        type: "error",
        error: {
          name: "APIError",
          data: {
            message:
              "Authentication failed with provider at http://127.0.0.1:1/v1 (HTTP 401).\n  Check your COPILOT_PROVIDER_API_KEY.",
            statusCode: 401,
          },
        },
      },
    ]);
    expect(judged(lines).outcome.class).toBe("api_error");

    const failed = (notice: string) => {
      const c = new AcpTranslator("s", "Copilot");
      return judged([...c.update(chunk(notice)), ...c.finish("end_turn", null)]);
    };
    const overflow = failed(
      "Error: 400 This model's maximum context length is 128000 tokens. However, your messages resulted in 200000 tokens.",
    );
    expect(overflow.outcome.class).toBe("context_overflow");
    expect(overflow.events.filter((e) => e.type === "message")).toEqual([]);
    const limited = failed(
      "Error: Failed to get response from the AI model; retried 5 times (total retry wait time: 5.4 seconds) Last error: 429 Rate limit reached",
    );
    expect(limited.outcome).toMatchObject({ class: "api_error", error: { status_code: 429 } });
    expect(failed("Error: something else went wrong").outcome).toMatchObject({
      class: "agent_error",
      error: { name: "UnknownError", message: "something else went wrong" },
    });
  });

  it("a model's answer that begins 'Error: ' is an answer: in a turn that tells its usage, or from another agent", () => {
    const told = new AcpTranslator("s", "Copilot");
    const lines = [
      ...told.update(chunk("Error: the build is broken.")),
      ...told.finish("end_turn", { inputTokens: 10, outputTokens: 5, totalTokens: 15 }),
    ];
    const answered = judged(lines);
    expect(answered.outcome.class).toBe("success");
    expect(answered.events.filter((e) => e.type === "message").map((e) => e.text)).toEqual([
      "Error: the build is broken.",
    ]);
    // The model's text after a notice is a message apart from it.
    const after = new AcpTranslator("s", "Copilot");
    const parts = [
      ...after.update(chunk("Info: /w/a.txt")),
      ...after.update(chunk("Wrote ")),
      ...after.update(chunk("a.txt.")),
      ...after.finish("end_turn", { inputTokens: 10, outputTokens: 5, totalTokens: 15 }),
    ];
    expect(
      judged(parts)
        .events.filter((e) => e.type === "message")
        .map((e) => e.text),
    ).toEqual(["Info: /w/a.txt", "Wrote a.txt."]);
    const other = new AcpTranslator("s", "codex-acp");
    const codex = [...other.update(chunk("Error: the build is broken.")), ...other.finish("end_turn", null)];
    const another = judged(codex);
    expect(another.outcome.class).toBe("success");
    expect(another.events.filter((e) => e.type === "message").map((e) => e.text)).toEqual([
      "Error: the build is broken.",
    ]);
  });
});
