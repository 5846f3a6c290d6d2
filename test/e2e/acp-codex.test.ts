// `--acp codex`: Zed's codex-acp (pinned dev dependency; Codex built into its native binary) against
// the scripted Responses API server on loopback (src/domain/scripted/responses-server.ts), in a
// throwaway HOME whose config.toml names that server as its model provider, with update checks,
// analytics, feedback and OpenTelemetry export off, and approval_policy "untrusted": Codex then asks
// before every command it does not know to be safe and every edit, and oc-exec's policy answers.
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { usePeer } from "../support/peers.js";
import { marked } from "../support/procs.js";
import { eventsOf } from "../support/run-cli.js";

const e2e = useE2E();
const codex = usePeer("codex");

const run = (args: string[], extra: Record<string, string> = {}, cwd = e2e.workspace(), acp = "codex") =>
  e2e.run(["-q", "-n", "--acp", acp, ...args], { cwd, extraEnv: { ...codex.env, ...extra } });
const requestsFor = (marker: string) => codex.server.requests.filter((r) => r.userText.includes(marker));
const stable = (event: object) => {
  const { time: _t, session_id: _s, duration_ms: _d, ...rest } = event as Record<string, unknown>;
  return rest;
};
const NO_TOKENS = { input: 0, output: 0, reasoning: 0, cache_read: 0, cache_write: 0, total: 0 };

describe.skipIf(process.platform !== "linux")(
  "--acp codex: Codex through Zed's adapter, under oc-exec's contract",
  () => {
    it("a tool turn with --auto: run.started names the adapter, the command's tool event with its output; no tokens told; exit 0", async () => {
      const result = await run(["--auto", "scenario:tool codex-tool"]);
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
        name: "codex",
        agent_name: "codex-acp",
        version: "0.16.0",
        protocol_version: 1,
      });
      // Its command is the script of `/bin/bash -lc`; its output, the command's stdout and stderr.
      expect(stable(eventsOf(result, "tool")[0]!)).toEqual({
        type: "tool",
        seq: 3,
        call_id: "call_1_0",
        tool: "bash",
        status: "completed",
        input: { command: "echo hi" },
        output: "hi\n",
        output_truncated: false,
        error: null,
        title: "bash",
      });
      expect(stable(eventsOf(result, "message")[0]!)).toEqual({
        type: "message",
        seq: 4,
        text: "The command printed hi.",
      });
      // Codex tells ACP how full the context window is (usage_update), never the tokens of a call.
      expect(stable(eventsOf(result, "step.finished")[0]!)).toEqual({
        type: "step.finished",
        seq: 5,
        step: 1,
        reason: "stop",
        usage: NO_TOKENS,
        cost_usd: 0,
        model: null,
      });
      expect(result.result).toMatchObject({
        class: "success",
        exit_code: 0,
        text: "The command printed hi.",
        usage: NO_TOKENS,
        cost_usd: 0,
        tools: { total: 1, failed: 0, denied: 0 },
      });
      // Two model calls (the command, then the answer), each with the key from the provider's env_key.
      expect(requestsFor("codex-tool").map((r) => r.authorization)).toEqual([
        "Bearer sk-test-codex-key",
        "Bearer sk-test-codex-key",
      ]);
    });

    it("an edit nobody approves: Codex asks, oc-exec refuses, Codex ends its turn: permission.denied, exit 2, nothing written; --allow edit grants it", async () => {
      const ws = e2e.workspace();
      const refused = await run(["scenario:write codex-refused"], {}, ws);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.result.class).toBe("approval_denied");
      expect(eventsOf(refused, "permission.denied")).toMatchObject([
        { permission: "edit", patterns: [join(ws, "notes.txt")] },
      ]);
      // Refused, Codex aborts the turn: the step ends `cancelled`, and no tool ran.
      expect(eventsOf(refused, "step.finished")).toMatchObject([{ reason: "cancelled" }]);
      expect(refused.result.tools).toEqual({ total: 0, failed: 0, denied: 0 });
      expect(existsSync(join(ws, "notes.txt"))).toBe(false);

      const allowed = e2e.workspace();
      const granted = await run(["--allow", "edit", "scenario:write codex-allowed"], {}, allowed);
      expect(granted.code, granted.stderr).toBe(0);
      expect(readFileSync(join(allowed, "notes.txt"), "utf8")).toBe("hello\n");
      expect(eventsOf(granted, "tool")[0]).toMatchObject({
        tool: "edit",
        status: "completed",
        input: { changes: { [join(allowed, "notes.txt")]: { type: "add", content: "hello\n" } } },
        output: "Success. Updated the following files:\nA notes.txt\n",
      });
      expect(granted.result.files_changed).toEqual([{ path: "notes.txt", change: "added" }]);
    });

    it("a command that writes: refused unless the policy allows its script (bash:'echo *'); --deny wins over --auto", async () => {
      const ws = e2e.workspace();
      const refused = await run(["scenario:bash-write codex-cmd-refused"], {}, ws);
      expect(refused.code, refused.stderr).toBe(2);
      expect(eventsOf(refused, "permission.denied")).toMatchObject([
        { permission: "bash", patterns: ["echo fixed > fixed.txt"] },
      ]);
      expect(existsSync(join(ws, "fixed.txt"))).toBe(false);

      const allowed = e2e.workspace();
      const granted = await run(["--allow", "bash:echo *", "scenario:bash-write codex-cmd-allowed"], {}, allowed);
      expect(granted.code, granted.stderr).toBe(0);
      expect(readFileSync(join(allowed, "fixed.txt"), "utf8")).toBe("fixed\n");

      const denied = e2e.workspace();
      const deny = await run(["--deny", "bash", "--auto", "scenario:bash-write codex-cmd-denied"], {}, denied);
      expect(deny.code, deny.stderr).toBe(2);
      expect(existsSync(join(denied, "fixed.txt"))).toBe(false);
    });

    it("under Codex's own default (approval_policy on-request) it asks for an edit, never for a command: its sandbox fails the write unseen; exit 0, nothing written", async () => {
      const onRequest = "codex-acp -c approval_policy=on-request";
      const edit = e2e.workspace();
      const refused = await run(["scenario:write codex-default-edit"], {}, edit, onRequest);
      expect(refused.code, refused.stderr).toBe(2);
      expect(eventsOf(refused, "permission.denied")).toMatchObject([
        { permission: "edit", patterns: [join(edit, "notes.txt")] },
      ]);

      const ws = e2e.workspace();
      const result = await run(["scenario:bash-write codex-default-cmd"], {}, ws, onRequest);
      expect(result.code, result.stderr).toBe(0);
      expect(result.types).toEqual([
        "run.started",
        "session.started",
        "step.started",
        "message",
        "step.finished",
        "result",
      ]);
      expect(result.result).toMatchObject({ class: "success", tools: { total: 0, failed: 0, denied: 0 } });
      expect(existsSync(join(ws, "fixed.txt"))).toBe(false);
      // Only the model saw the command fail, in the tool result Codex sent back.
      const [, second] = requestsFor("codex-default-cmd");
      expect(JSON.stringify(second?.body.messages)).toMatch(/Read-only file system/);
    });

    it("the provider refuses the key: Codex retries it five times, then api_error, exit 4, status 401, the key redacted", async () => {
      const result = await run(["scenario:http-401 codex-401"]);
      expect(result.code, result.stderr).toBe(4);
      expect(result.result.error).toMatchObject({
        name: "APIError",
        status_code: 401,
        message: "Incorrect API key provided: sk-[REDACTED]",
      });
      expect(requestsFor("codex-401").length).toBe(6);
    });

    it("the provider's rate limit: api_error, exit 4, status 429, as Codex words it, without a retry", async () => {
      const result = await run(["scenario:http-429 codex-429"]);
      expect(result.code, result.stderr).toBe(4);
      expect(result.result.error).toMatchObject({
        name: "APIError",
        status_code: 429,
        message: "exceeded retry limit, last status: 429 Too Many Requests",
      });
      // A 429 that is no usage limit, Codex does not retry.
      expect(requestsFor("codex-429").length).toBe(1);
    });

    it("the conversation does not fit (response.failed, context_length_exceeded): context_overflow, exit 3", async () => {
      const result = await run(["scenario:context-overflow codex-overflow"]);
      expect(result.code, result.stderr).toBe(3);
      expect(result.result.error).toMatchObject({
        name: "ContextOverflowError",
        message:
          "Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.",
      });
    });

    it("a stalled provider: --timeout ends it with 124, and nothing the run started is left (the wrapper's native binary included)", async () => {
      const mark = randomUUID();
      const result = await run(["--timeout", "5s", "scenario:hang codex-hang"], { OC_EXEC_TEST_MARK: mark });
      expect(result.code).toBe(124);
      expect(result.result).toMatchObject({ class: "timeout", error: { timeout: { kind: "turn", ms: 5000 } } });
      expect(marked(mark)).toEqual([]);
    });
  },
);
