// `--acp copilot`: GitHub Copilot CLI (pinned dev dependency: the npm loader and its native binary)
// in ACP mode (`copilot --acp --stdio`) against the scripted chat completions server on loopback,
// named as its BYOK provider (COPILOT_PROVIDER_BASE_URL, a fake key, COPILOT_MODEL), offline
// (COPILOT_OFFLINE: no GitHub sign-in, telemetry or update check), in a throwaway HOME. Copilot
// asks before every command and edit, and oc-exec's policy answers. It ends a failed turn as any
// other, its "Error: " notice as the last message and no usage told: oc-exec reads that notice.
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { usePeer } from "../support/peers.js";
import { marked } from "../support/procs.js";
import { eventsOf } from "../support/run-cli.js";

const e2e = useE2E();
const copilot = usePeer("copilot");

const run = (args: string[], extra: Record<string, string> = {}, cwd = e2e.workspace()) =>
  e2e.run(["-q", "-n", "--acp", "copilot", ...args], { cwd, extraEnv: { ...copilot.env, ...extra } });
const requestsFor = (marker: string) => copilot.server.requests.filter((r) => r.userText.includes(marker));
const stable = (event: object) => {
  const { time: _t, session_id: _s, duration_ms: _d, ...rest } = event as Record<string, unknown>;
  return rest;
};
const NO_TOKENS = { input: 0, output: 0, reasoning: 0, cache_read: 0, cache_write: 0, total: 0 };

describe.skipIf(process.platform !== "linux")("--acp copilot: GitHub Copilot CLI under oc-exec's contract", () => {
  it("a tool turn with --auto: run.started names it, the command's tool event with Copilot's output, its usage; exit 0", async () => {
    const result = await run(["--auto", "scenario:tool copilot-tool"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.types).toEqual([
      "run.started",
      "session.started",
      "step.started",
      "tool",
      "message",
      "step.finished",
      "result",
    ]);
    expect((result.events[0] as { acp?: unknown }).acp).toEqual({
      name: "copilot",
      agent_name: "Copilot",
      version: "1.0.102",
      protocol_version: 1,
    });
    // Its output is what Copilot tells the model: the command's, then its shell's exit line.
    expect(stable(eventsOf(result, "tool")[0]!)).toEqual({
      type: "tool",
      seq: 3,
      call_id: "call_1_0",
      tool: "bash",
      status: "completed",
      input: { command: "echo hi", description: "Print hi" },
      output: "hi\n<shellId: 0 completed with exit code 0>",
      output_truncated: false,
      error: null,
      title: "bash",
    });
    expect(stable(eventsOf(result, "message")[0]!)).toEqual({
      type: "message",
      seq: 4,
      text: "The command printed hi.",
    });
    // The usage of its two model calls, summed in the prompt's response (150 + 200 in, 20 + 6 out).
    const usage = { input: 350, output: 26, reasoning: 0, cache_read: 0, cache_write: 0, total: 376 };
    expect(stable(eventsOf(result, "step.finished")[0]!)).toEqual({
      type: "step.finished",
      seq: 5,
      step: 1,
      reason: "stop",
      usage,
      cost_usd: 0,
      model: null,
    });
    expect(result.result).toMatchObject({
      class: "success",
      exit_code: 0,
      text: "The command printed hi.",
      usage,
      tools: { total: 1, failed: 0, denied: 0 },
    });
    expect(requestsFor("copilot-tool").map((r) => r.authorization)).toEqual([
      "Bearer sk-test-copilot-key",
      "Bearer sk-test-copilot-key",
    ]);
  });

  it("a command nobody approves: Copilot asks, oc-exec refuses, the call denied and paired with its permission.denied; exit 2, nothing written", async () => {
    const ws = e2e.workspace();
    const result = await run(["scenario:bash-write copilot-refused"], {}, ws);
    expect(result.code, result.stderr).toBe(2);
    expect(result.types).toEqual([
      "run.started",
      "session.started",
      "step.started",
      "tool",
      "permission.denied",
      "message",
      "step.finished",
      "result",
    ]);
    expect(stable(eventsOf(result, "tool")[0]!)).toEqual({
      type: "tool",
      seq: 3,
      call_id: "call_1_0",
      tool: "bash",
      status: "denied",
      input: { command: "echo fixed > fixed.txt", description: "Fix" },
      output: null,
      output_truncated: false,
      error: "The user rejected this tool call.",
      title: null,
    });
    expect(stable(eventsOf(result, "permission.denied")[0]!)).toEqual({
      type: "permission.denied",
      seq: 4,
      permission: "bash",
      pattern: "echo fixed > fixed.txt",
      patterns: ["echo fixed > fixed.txt"],
      tool: "bash",
      call_id: "call_1_0",
    });
    // Refused, Copilot ends its turn with a notice of its own, which is the turn's last text.
    expect(result.result).toMatchObject({
      class: "approval_denied",
      exit_code: 2,
      text: "Info: Operation cancelled by user",
      tools: { total: 1, failed: 0, denied: 1 },
    });
    expect(existsSync(join(ws, "fixed.txt"))).toBe(false);
    expect(requestsFor("copilot-refused").length).toBe(1);

    const allowed = e2e.workspace();
    const granted = await run(["--allow", "bash:echo *", "scenario:bash-write copilot-cmd-allowed"], {}, allowed);
    expect(granted.code, granted.stderr).toBe(0);
    expect(readFileSync(join(allowed, "fixed.txt"), "utf8")).toBe("fixed\n");

    const denied = e2e.workspace();
    const deny = await run(["--deny", "bash", "--auto", "scenario:bash-write copilot-cmd-denied"], {}, denied);
    expect(deny.code, deny.stderr).toBe(2);
    expect(deny.result.class).toBe("approval_denied");
    expect(existsSync(join(denied, "fixed.txt"))).toBe(false);
  });

  it("a new file: refused unless the policy allows edit; granted, its create call, Copilot's words and the file added", async () => {
    const ws = e2e.workspace();
    const refused = await run(["scenario:write copilot-edit-refused"], {}, ws);
    expect(refused.code, refused.stderr).toBe(2);
    // Copilot's permission request names the file by its absolute path.
    expect(eventsOf(refused, "permission.denied")).toMatchObject([
      { permission: "edit", patterns: [join(ws, "notes.txt")], tool: "edit", call_id: "call_1_0" },
    ]);
    expect(existsSync(join(ws, "notes.txt"))).toBe(false);

    const allowed = e2e.workspace();
    const granted = await run(["--allow", "edit", "scenario:write copilot-edit-allowed"], {}, allowed);
    expect(granted.code, granted.stderr).toBe(0);
    expect(readFileSync(join(allowed, "notes.txt"), "utf8")).toBe("hello\n");
    expect(granted.types).toEqual([
      "run.started",
      "session.started",
      "step.started",
      "message",
      "tool",
      "file.changed",
      "message",
      "step.finished",
      "result",
    ]);
    // Before the call's end Copilot tells the path it wrote, as a notice of its own.
    expect(eventsOf(granted, "message").map((m) => m.text)).toEqual([
      `Info: ${join(allowed, "notes.txt")}`,
      "Wrote notes.txt.",
    ]);
    expect(stable(eventsOf(granted, "tool")[0]!)).toEqual({
      type: "tool",
      seq: 4,
      call_id: "call_1_0",
      tool: "edit",
      status: "completed",
      input: { path: "notes.txt", file_text: "hello\n" },
      output: `Created file ${join(allowed, "notes.txt")} with 6 characters`,
      output_truncated: false,
      error: null,
      title: "edit",
    });
    expect(granted.result.files_changed).toEqual([{ path: "notes.txt", change: "added" }]);
  });

  it("the provider refuses the key: Copilot tries three times and says so in an Error notice; api_error, exit 4, status 401", async () => {
    const result = await run(["scenario:http-401 copilot-401"]);
    expect(result.code, result.stderr).toBe(4);
    expect(result.result.error).toMatchObject({
      name: "APIError",
      status_code: 401,
      message: `Authentication failed with provider at ${copilot.server.url} (HTTP 401).\n  Check your COPILOT_PROVIDER_API_KEY, COPILOT_PROVIDER_API_KEY_COMMAND, or COPILOT_PROVIDER_BEARER_TOKEN.`,
    });
    // Its two retries are notices of their own, not the error's text.
    expect(eventsOf(result, "message").map((m) => m.text)).toEqual([
      "Info: Request failed due to a transient API error. Retrying...",
      "Info: Request failed due to a transient API error. Retrying...",
    ]);
    expect(result.result.usage).toEqual(NO_TOKENS);
    expect(requestsFor("copilot-401").length).toBe(3);
  });

  it("the provider's rate limit: Copilot retries five times, then api_error, exit 4, status 429, as Copilot words it", async () => {
    const result = await run(["scenario:http-429 copilot-429"]);
    expect(result.code, result.stderr).toBe(4);
    expect(result.result.error).toMatchObject({ name: "APIError", status_code: 429 });
    expect(result.result.error?.message).toMatch(
      /^Failed to get response from the AI model; retried 5 times \(total retry wait time: [\d.]+ seconds\) Last error: 429 Rate limit reached$/,
    );
    expect(requestsFor("copilot-429").length).toBe(6);
  });

  it("the conversation does not fit: Copilot passes on the provider's 400 and text; context_overflow, exit 3", async () => {
    const result = await run(["scenario:context-overflow copilot-overflow"]);
    expect(result.code, result.stderr).toBe(3);
    expect(result.result).toMatchObject({
      class: "context_overflow",
      text: null,
      error: {
        name: "APIError",
        status_code: 400,
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 200000 tokens.",
      },
    });
  });

  it("a stalled provider: --timeout ends it with 124, and nothing the run started is left (the loader's native binary included)", async () => {
    const mark = randomUUID();
    const result = await run(["--timeout", "5s", "scenario:hang copilot-hang"], { OC_EXEC_TEST_MARK: mark });
    expect(result.code).toBe(124);
    expect(result.result).toMatchObject({ class: "timeout", error: { timeout: { kind: "turn", ms: 5000 } } });
    expect(marked(mark)).toEqual([]);
  });
});
