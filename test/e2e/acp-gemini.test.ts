// `--acp gemini` with the real gemini-cli (pinned dev dependency) against the scripted Gemini API
// server on loopback (src/domain/scripted/gemini-server.ts), in a throwaway HOME with its telemetry,
// usage statistics and update checks off: the same contract rows as opencode's.
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { usePeer } from "../support/peers.js";
import { marked } from "../support/procs.js";
import { eventsOf } from "../support/run-cli.js";

const e2e = useE2E();
const gemini = usePeer("gemini");

const run = (args: string[], extra: Record<string, string> = {}, cwd = e2e.workspace()) =>
  e2e.run(["-q", "-n", "--acp", "gemini", ...args], { cwd, extraEnv: { ...gemini.env, ...extra } });
const stable = (event: object) => {
  const { time: _t, session_id: _s, duration_ms: _d, call_id: _c, ...rest } = event as Record<string, unknown>;
  return rest;
};

describe.skipIf(process.platform !== "linux")("--acp gemini: gemini-cli under oc-exec's contract", () => {
  it("a tool turn: run.started names the agent, the command's tool event, the answer, usage from its _meta; exit 0", async () => {
    const result = await run(["scenario:tool gemini-tool"]);
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
      name: "gemini",
      agent_name: "gemini-cli",
      version: "0.61.0",
      protocol_version: 1,
    });
    // gemini-cli sends no raw input: the command is the call's title. It runs `echo` without asking.
    expect(stable(eventsOf(result, "tool")[0]!)).toMatchObject({
      type: "tool",
      tool: "bash",
      status: "completed",
      input: { command: "echo hi" },
      title: "echo hi",
    });
    expect(result.result).toMatchObject({
      class: "success",
      text: "The command printed hi.",
      tools: { total: 1, failed: 0, denied: 0 },
      // The two model calls' tokens (150 + 200 in, 20 + 6 out), as gemini-cli sums them.
      usage: { input: 350, output: 26, total: 376 },
    });
    expect(gemini.server.requests.filter((r) => r.userText.includes("gemini-tool")).length).toBe(2);
  });

  it("an edit nobody approves: refused, permission.denied, exit 2, nothing written", async () => {
    const ws = e2e.workspace();
    const result = await run(["scenario:write gemini-refused"], {}, ws);
    expect(result.code).toBe(2);
    expect(result.result.class).toBe("approval_denied");
    // Named as the agent that asked, not as opencode.
    expect(result.result.error?.message).toMatch(
      /^gemini needed permission edit \(.*notes\.txt\), and nobody can approve it in a headless run\. Allow it with --allow edit/,
    );
    expect(eventsOf(result, "permission.denied")).toMatchObject([
      { permission: "edit", patterns: [join(ws, "notes.txt")] },
    ]);
    expect(existsSync(join(ws, "notes.txt"))).toBe(false);
  });

  it("the policy answers the agent: --allow edit grants the write; --allow read refuses it; --deny wins over --auto", async () => {
    const allowed = e2e.workspace();
    const granted = await run(["--allow", "edit", "scenario:write gemini-allowed"], {}, allowed);
    expect(granted.code, granted.stderr).toBe(0);
    expect(readFileSync(join(allowed, "notes.txt"), "utf8")).toBe("hello\n");
    for (const flags of [
      ["--allow", "read"],
      ["--deny", "edit", "--auto"],
    ]) {
      const ws = e2e.workspace();
      const refused = await run([...flags, "scenario:write gemini-policy"], {}, ws);
      expect(refused.code, flags.join(" ")).toBe(2);
      expect(existsSync(join(ws, "notes.txt"))).toBe(false);
    }
  });

  it("the provider refuses the key: api_error, exit 4, status 401, the key redacted", async () => {
    const result = await run(["scenario:http-401 gemini-401"]);
    expect(result.code).toBe(4);
    expect(result.result.error).toMatchObject({
      name: "APIError",
      status_code: 401,
      message: "Incorrect API key provided: sk-[REDACTED]",
    });
  });

  it("the conversation does not fit: context_overflow, exit 3", async () => {
    const result = await run(["scenario:context-overflow gemini-overflow"]);
    expect(result.code).toBe(3);
    expect(result.result.class).toBe("context_overflow");
  });

  it("a stalled provider: --timeout ends it with 124, and nothing the run started is left", async () => {
    const mark = randomUUID();
    const result = await run(["--timeout", "5s", "scenario:hang gemini-hang"], { OC_EXEC_TEST_MARK: mark });
    expect(result.code).toBe(124);
    expect(result.result).toMatchObject({ class: "timeout", error: { timeout: { kind: "turn", ms: 5000 } } });
    // oc-exec has exited: gemini-cli and everything it started went with it.
    expect(marked(mark)).toEqual([]);
  });
});
