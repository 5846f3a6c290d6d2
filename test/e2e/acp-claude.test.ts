// `--acp claude`: Zed's claude-agent-acp over Claude Code (pinned dev dependency) against the
// scripted Anthropic Messages server on loopback (src/domain/scripted/anthropic-server.ts), in a
// throwaway HOME with its telemetry, error reporting, update checks and non-essential traffic off.
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { usePeer } from "../support/peers.js";
import { marked } from "../support/procs.js";
import { eventsOf } from "../support/run-cli.js";

const e2e = useE2E();
const claude = usePeer("claude");

const run = (args: string[], extra: Record<string, string> = {}, cwd = e2e.workspace()) =>
  e2e.run(["-q", "-n", "--acp", "claude", ...args], { cwd, extraEnv: { ...claude.env, ...extra } });

describe.skipIf(process.platform !== "linux")(
  "--acp claude: Claude Code through Zed's adapter, under oc-exec's contract",
  () => {
    it("a tool turn: run.started names the adapter, the command's tool event and output, usage and cost; exit 0", async () => {
      const result = await run(["scenario:tool claude-tool"]);
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
        name: "claude",
        agent_name: "@zed-industries/claude-agent-acp",
        version: "0.23.1",
        protocol_version: 1,
      });
      expect(eventsOf(result, "tool")[0]).toMatchObject({
        tool: "bash",
        status: "completed",
        input: { command: "echo hi", description: "Print hi" },
        output: "hi",
      });
      expect(result.result).toMatchObject({
        class: "success",
        text: "The command printed hi.",
        usage: { input: 350, output: 26, total: 376 },
      });
      // Its usage_update's cost (which carries `used: null`, outside ACP's schema, kept all the same).
      expect(result.result.cost_usd).toBeGreaterThan(0);
      // stderr carries no protocol complaint about it.
      expect(result.stderr).not.toMatch(/Invalid params/);
    });

    it("an edit nobody approves: refused, permission.denied, exit 2, nothing written; --allow edit grants it", async () => {
      const ws = e2e.workspace();
      const refused = await run(["scenario:write claude-refused"], {}, ws);
      expect(refused.code).toBe(2);
      expect(eventsOf(refused, "permission.denied")).toMatchObject([{ permission: "edit", patterns: ["notes.txt"] }]);
      expect(existsSync(join(ws, "notes.txt"))).toBe(false);
      const allowed = e2e.workspace();
      const granted = await run(["--allow", "edit", "scenario:write claude-allowed"], {}, allowed);
      expect(granted.code, granted.stderr).toBe(0);
      expect(readFileSync(join(allowed, "notes.txt"), "utf8")).toBe("hello\n");
    });

    it("the provider refuses the key: Claude Code retries it for ever, so only --timeout ends it (124), nothing left", async () => {
      const mark = randomUUID();
      const result = await run(["--timeout", "8s", "scenario:http-401 claude-401"], { OC_EXEC_TEST_MARK: mark });
      expect(result.code).toBe(124);
      expect(result.result.class).toBe("timeout");
      expect(claude.server.requests.filter((r) => r.userText.includes("claude-401")).length).toBeGreaterThan(1);
      expect(marked(mark)).toEqual([]);
    });

    it("the conversation does not fit: context_overflow, exit 3, from its message", async () => {
      const result = await run(["scenario:context-overflow claude-overflow"]);
      expect(result.code).toBe(3);
      expect(result.result.error).toMatchObject({ name: "ContextOverflowError", message: "Prompt is too long" });
    });

    it("a stalled provider: --timeout ends it with 124, and nothing the run started is left", async () => {
      const mark = randomUUID();
      const result = await run(["--timeout", "5s", "scenario:hang claude-hang"], { OC_EXEC_TEST_MARK: mark });
      expect(result.code).toBe(124);
      expect(result.result).toMatchObject({ class: "timeout", error: { timeout: { kind: "turn", ms: 5000 } } });
      expect(marked(mark)).toEqual([]);
    });
  },
);
