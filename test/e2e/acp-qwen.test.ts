// `--acp qwen`: Qwen Code (pinned dev dependency) against the scripted OpenAI-compatible server on
// loopback, in a throwaway HOME with its telemetry, usage statistics and update checks off.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { usePeer } from "../support/peers.js";
import { marked } from "../support/procs.js";
import { eventsOf } from "../support/run-cli.js";

const e2e = useE2E();
const qwen = usePeer("qwen");

const run = (args: string[], extra: Record<string, string> = {}, cwd = e2e.workspace()) =>
  e2e.run(["-q", "-n", "--acp", "qwen", ...args], { cwd, extraEnv: { ...qwen.env, ...extra } });

describe.skipIf(process.platform !== "linux")("--acp qwen: Qwen Code under oc-exec's contract", () => {
  it("a tool turn: run.started names it, the command's tool event and output, usage summed from its steps; exit 0", async () => {
    const result = await run(["scenario:tool qwen-tool"]);
    expect(result.code, result.stderr).toBe(0);
    expect((result.events[0] as { acp?: unknown }).acp).toEqual({
      name: "qwen",
      agent_name: "qwen-code",
      version: "0.24.4",
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
      // Its two model calls' usage, each in a message chunk's _meta (150 + 200 in, 20 + 6 out).
      usage: { input: 350, output: 26, total: 376 },
    });
  });

  it("a command that writes, nobody approving: refused, permission.denied, exit 2, nothing written; --auto runs it", async () => {
    const ws = e2e.workspace();
    const refused = await run(["scenario:bash-write qwen-refused"], {}, ws);
    expect(refused.code, refused.stderr).toBe(2);
    expect(eventsOf(refused, "permission.denied")).toMatchObject([
      { permission: "bash", patterns: ["echo fixed > fixed.txt"] },
    ]);
    expect(existsSync(join(ws, "fixed.txt"))).toBe(false);
    const allowed = e2e.workspace();
    const granted = await run(["--auto", "scenario:bash-write qwen-granted"], {}, allowed);
    expect(granted.code, JSON.stringify(granted.result)).toBe(0);
    expect(existsSync(join(allowed, "fixed.txt"))).toBe(true);
  });

  it("the provider refuses the key: api_error, exit 4, status 401, the key redacted", async () => {
    const result = await run(["scenario:http-401 qwen-401"]);
    expect(result.code).toBe(4);
    expect(result.result.error).toMatchObject({
      name: "APIError",
      status_code: 401,
      message: "Incorrect API key provided: sk-[REDACTED]",
    });
  });

  it("the conversation does not fit: context_overflow, exit 3", async () => {
    const result = await run(["scenario:context-overflow qwen-overflow"]);
    expect(result.code).toBe(3);
    expect(result.result.class).toBe("context_overflow");
  });

  it("a stalled provider: --timeout ends it with 124, and nothing the run started is left", async () => {
    const mark = randomUUID();
    const result = await run(["--timeout", "5s", "scenario:hang qwen-hang"], { OC_EXEC_TEST_MARK: mark });
    expect(result.code).toBe(124);
    expect(result.result).toMatchObject({ class: "timeout", error: { timeout: { kind: "turn", ms: 5000 } } });
    expect(marked(mark)).toEqual([]);
  });
});
