// --acp: a turn through the Agent Client Protocol, with the real `opencode acp` against the
// scripted model: the same events, classes and exit codes as `opencode run` gives, distinct on a
// refused key, an overflow, a denial and a stall; and nothing of the agent left behind.
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundledBinary } from "../../src/domain/opencode/locate.js";
import { useE2E } from "../support/e2e.js";
import { marked } from "../support/procs.js";
import { eventsOf } from "../support/run-cli.js";

const e2e = useE2E();

/** A scripted ACP agent (a Node script, executable) in the test HOME's bin directory: its path. */
function agentScript(name: string, source: string): string {
  const bin = join(e2e.home.root, "acp-bin");
  mkdirSync(bin, { recursive: true });
  const agent = join(bin, name);
  writeFileSync(agent, source);
  chmodSync(agent, 0o755);
  return agent;
}

/** Every field but the times, ids and durations, which differ from run to run. */
const stable = (event: object) => {
  const { time: _t, session_id: _s, duration_ms: _d, ...rest } = event as Record<string, unknown>;
  return rest;
};

describe("--acp opencode: a turn through opencode's ACP mode", () => {
  it("a tool call and an answer: exactly the events `opencode run` gives, exit 0", async () => {
    const dir = e2e.workspace();
    const run = await e2e.run(["-q", "--acp", "opencode", "scenario:tool acp-tool"], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.types).toEqual([
      "run.started",
      "session.started",
      "step.started",
      "tool",
      "message",
      "step.finished",
      "result",
    ]);
    expect(run.events[0]).toMatchObject({
      type: "run.started",
      opencode: { path: expect.stringMatching(/opencode acp$/) },
    });
    // The agent, as it introduced itself in initialize, before the turn's first line.
    expect((run.events[0] as { acp?: unknown }).acp).toEqual({
      name: "opencode",
      agent_name: "OpenCode",
      version: "1.18.33",
      protocol_version: 1,
    });
    expect(stable(eventsOf(run, "tool")[0]!)).toEqual({
      type: "tool",
      seq: 3,
      call_id: "call_1_0",
      tool: "bash",
      status: "completed",
      input: { command: "echo hi", description: "Print hi" },
      output: "hi\n",
      output_truncated: false,
      error: null,
      title: "echo hi",
    });
    expect(run.result).toMatchObject({
      class: "success",
      exit_code: 0,
      text: "The command printed hi.",
      steps: 1,
      tools: { total: 1, failed: 0, denied: 0 },
      usage: { input: 200, output: 6, total: 206 },
    });
    expect(e2e.requestsFor("acp-tool").length).toBe(2);
  });

  it.each([
    ["http-401", 4, "api_error", "APIError"],
    ["context-overflow", 3, "context_overflow", "ContextOverflowError"],
    ["read-outside", 2, "approval_denied", "PermissionDenied"],
  ])("scenario %s: exit %i (%s), named %s", async (scenario, code, klass, name) => {
    const run = await e2e.run(["-q", "--acp", "opencode", `scenario:${scenario} acp-${scenario}`]);
    expect(run.code, run.stderr).toBe(code);
    expect(run.result).toMatchObject({ class: klass, error: { name } });
  });

  it("the refused permission is remembered: a permission.denied event and the denial in the result", async () => {
    const run = await e2e.run(["-q", "--acp", "opencode", "scenario:read-outside acp-denied"]);
    expect(eventsOf(run, "permission.denied")).toEqual([
      expect.objectContaining({ permission: "external_directory", pattern: "/etc/hostname" }),
    ]);
    expect(run.result.permission_denials).toHaveLength(1);
    // --auto grants it: the agent reads the file and answers.
    const granted = await e2e.run(["-q", "--auto", "--acp", "opencode", "scenario:read-outside acp-granted"]);
    expect(granted.code, granted.stderr).toBe(0);
    expect(eventsOf(granted, "permission.denied")).toEqual([]);
  });

  it("a stalled model: --timeout ends the turn with 124, and the agent and its tools are gone", async () => {
    const tmp = join(e2e.home.root, "acp-tmp");
    mkdirSync(tmp, { recursive: true });
    const mark = randomUUID();
    const run = await e2e.run(["-q", "--timeout", "5s", "--acp", "opencode", "scenario:hang acp-hang"], {
      extraEnv: { TMPDIR: tmp, OC_EXEC_TEST_MARK: mark },
    });
    expect(run.code).toBe(124);
    expect(run.result).toMatchObject({ class: "timeout", error: { timeout: { kind: "turn", ms: 5000 } } });
    // oc-exec has exited: the agent and everything it started went with it (wherever reparented).
    expect(marked(mark)).toEqual([]);
    // Its own TMPDIR (and the native library opencode leaves there) went with the run.
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe("--acp: one agent for the run", () => {
  it("a conversation: every turn a prompt in the one session of the one agent, the second seeing the first", async () => {
    const input = `${["scenario:echo remember the word fig", "scenario:echo what was the word?"].map((p) => JSON.stringify({ prompt: p })).join("\n")}\n`;
    const run = await e2e.run(["-q", "--acp", "opencode", "--input-format", "jsonl"], { stdin: input });
    expect(run.code, run.stderr).toBe(0);
    const results = run.events.filter((e) => e.type === "result") as {
      class: string;
      text: string;
      session_id: string;
    }[];
    expect(results.map((r) => r.class)).toEqual(["success", "success"]);
    // The scripted model answers from the session's first user message: turn 2 was sent in turn 1's session.
    expect(results[1]!.text).toBe("you said: scenario:echo remember the word fig");
    expect(new Set(results.map((r) => r.session_id)).size).toBe(1);
    expect(
      e2e
        .requestsFor("remember the word fig")
        .at(-1)!
        .body.messages.filter((m) => m.role === "user"),
    ).toHaveLength(2);
    // run.started of each turn names the agent the run started.
    const started = run.events.filter((e) => e.type === "run.started") as { acp?: { name: string } }[];
    expect(started.map((s) => s.acp?.name)).toEqual(["opencode", "opencode"]);
  });
});

describe("--acp: what is checked before a turn", () => {
  it("an agent that is not installed, a command that is not there: exit 5 naming it", async () => {
    const run = await e2e.run(["-q", "--acp", "gemini", "hi"], { extraEnv: { PATH: "/usr/bin:/bin" } });
    expect(run.code).toBe(5);
    expect(run.result.error).toMatchObject({
      name: "AcpAgentNotFound",
      message:
        "--acp gemini: gemini is not on PATH; install the agent (its ACP command is gemini --acp), or give its command line",
    });
  });

  it("a batch: a task's acp runs it on an agent of the batch's, beside a task on the batch's server; each names where it ran", async () => {
    const ws = e2e.workspace();
    const mark = randomUUID();
    writeFileSync(
      join(ws, "tasks.jsonl"),
      [
        { id: "through-acp", prompt: "scenario:tool acp-batch-1", acp: "opencode" },
        { id: "on-server", prompt: "scenario:tool acp-batch-2" },
        { id: "also-acp", prompt: "scenario:plain acp-batch-3", acp: "opencode" },
      ]
        .map((t) => JSON.stringify(t))
        .join("\n"),
    );
    const run = await e2e.runRaw(["batch", "-q", "tasks.jsonl"], { cwd: ws, extraEnv: { OC_EXEC_TEST_MARK: mark } });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const started = new Map(lines.filter((e) => e.type === "run.started").map((e) => [e.task_id, e]));
    const acp = { name: "opencode", agent_name: "OpenCode", version: "1.18.33", protocol_version: 1 };
    expect(started.get("through-acp")).toMatchObject({ acp, opencode: { path: expect.stringMatching(/ acp$/) } });
    expect(started.get("also-acp")).toMatchObject({ acp });
    expect(started.get("on-server")).not.toHaveProperty("acp");
    expect(started.get("on-server").opencode).toMatchObject({
      path: null,
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:/),
    });
    const tool = lines.find((e) => e.type === "tool" && e.task_id === "through-acp");
    expect(tool).toMatchObject({ tool: "bash", status: "completed", output: "hi\n" });
    const last = lines.at(-1);
    expect(last).toMatchObject({ type: "batch.result", ok: true, exit_code: 0 });
    expect(last.tasks.map((t: { id: string; class: string }) => [t.id, t.class])).toEqual([
      ["through-acp", "success"],
      ["on-server", "success"],
      ["also-acp", "success"],
    ]);
    // Every agent, and the batch's server, ended with the batch.
    expect(marked(mark)).toEqual([]);
  });

  it("a batch's tasks through one agent, one after another, share its process; a task stopped mid-turn ends it, and the next starts another", async () => {
    const ws = e2e.workspace();
    const mark = randomUUID();
    // Each start of the agent leaves a line: the command line runs opencode's ACP mode behind a shell.
    const starts = join(ws, "starts.txt");
    const opencode = bundledBinary()!.path;
    const acp = `/bin/sh -c 'echo started >> ${starts}; exec ${opencode} acp'`;
    writeFileSync(
      join(ws, "tasks.jsonl"),
      [
        { id: "first", prompt: "scenario:plain acp-pool-1", acp },
        { id: "second", prompt: "scenario:plain acp-pool-2", acp },
        { id: "stalled", prompt: "scenario:hang acp-pool-3", acp, timeout: "4s" },
        { id: "after", prompt: "scenario:plain acp-pool-4", acp },
      ]
        .map((t) => JSON.stringify(t))
        .join("\n"),
    );
    const run = await e2e.runRaw(["batch", "-q", "--concurrency", "1", "tasks.jsonl"], {
      cwd: ws,
      extraEnv: { OC_EXEC_TEST_MARK: mark },
    });
    expect(run.code, run.stderr).toBe(1);
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.at(-1).tasks.map((t: { id: string; class: string }) => [t.id, t.class])).toEqual([
      ["first", "success"],
      ["second", "success"],
      ["stalled", "timeout"],
      ["after", "success"],
    ]);
    // first, second and stalled on the agent started for first; after, on one started for it.
    expect(readFileSync(starts, "utf8")).toBe("started\nstarted\n");
    // A session of its own for each task.
    const sessions = lines.filter((e) => e.type === "session.started").map((e) => e.session_id);
    expect(new Set(sessions).size).toBe(4);
    expect(marked(mark)).toEqual([]);
  });

  it("a batch with OC_EXEC_ACP set: every task through the agent, no server started", async () => {
    const ws = e2e.workspace();
    writeFileSync(join(ws, "tasks.jsonl"), '{"id":"t1","prompt":"scenario:plain acp-batch-env"}\n');
    const run = await e2e.runRaw(["batch", "-q", "tasks.jsonl"], { cwd: ws, extraEnv: { OC_EXEC_ACP: "opencode" } });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: "run.started", task_id: "t1", acp: { name: "opencode" } });
    expect(lines.at(-1)).toMatchObject({ type: "batch.result", ok: true, tasks: [{ id: "t1", class: "success" }] });
    expect(e2e.requestsFor("acp-batch-env")).toHaveLength(1);
  });

  it("a batch task whose acp cannot go with the batch's --attach: a problem of the tasks file, exit 5, nothing run", async () => {
    const ws = e2e.workspace();
    writeFileSync(
      join(ws, "tasks.jsonl"),
      '{"id":"t1","prompt":"scenario:plain acp-batch-refused","acp":"opencode"}\n',
    );
    const run = await e2e.runRaw(["batch", "tasks.jsonl", "--attach", "http://127.0.0.1:9"], { cwd: ws });
    expect(run.code).toBe(5);
    const last = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
    expect(last).toMatchObject({ type: "batch.result", ok: false, exit_code: 5, tasks: [] });
    expect(last.problems).toEqual([
      "tasks.jsonl:1: acp runs the turn through an agent started for it; it cannot go with --attach",
    ]);
    expect(e2e.requestsFor("acp-batch-refused")).toEqual([]);
  });

  it("--acp with --attach: exit 5 naming both, nothing run", async () => {
    for (const [extra, other] of [[["--attach", "http://127.0.0.1:9"], "--attach"]] as const) {
      const run = await e2e.run(["-q", "--acp", "opencode", ...extra, "scenario:plain acp-conflict"]);
      expect(run.code).toBe(5);
      expect(run.result.error?.message).toBe(
        `--acp runs the turn through an agent started for it; it cannot go with ${other}`,
      );
    }
    expect(e2e.requestsFor("acp-conflict")).toEqual([]);
  });

  it("an agent that dies mid-conversation: exit 1 with what it said, not a hang", async () => {
    // Answers initialize, then exits with a word on stderr.
    const agent = agentScript(
      "dying-agent",
      `#!/usr/bin/env node
process.stdin.once("data", (d) => {
  const id = JSON.parse(String(d).split("\\n")[0]).id;
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result: { protocolVersion: 1, agentCapabilities: {} } }) + "\\n");
  process.stderr.write("dying-agent: out of luck\\n");
  setTimeout(() => process.exit(3), 50);
});
`,
    );
    const run = await e2e.run(["-q", "--acp", agent, "hi"]);
    expect(run.code).toBe(1);
    expect(run.result.error).toMatchObject({ name: "AcpAgentFailed" });
    expect(run.result.error!.message).toMatch(
      /^--acp dying-agent ended the conversation \(exit 3; it said: dying-agent: out of luck\): /,
    );
  });

  // A scripted agent for what no real one does on demand: lines that are not JSON-RPC around its
  // answers, and a turn it ends with `stopReason` STOP.
  const scriptedAgent = (stopReason: string) =>
    agentScript(
      `agent-${stopReason}`,
      `#!/usr/bin/env node
const out = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") {
    process.stdout.write("garbage: not json\\n{\\"half\\": \\n");
    out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1, agentCapabilities: {}, agentInfo: { name: "scripted", version: "0.0.1" } } });
  }
  if (m.method === "session/new") out({ jsonrpc: "2.0", id: m.id, result: { sessionId: "s1" } });
  if (m.method === "session/prompt") {
    process.stdout.write("\\u001b[31mmore garbage\\u0000\\n");
    out({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "an answer" } } } });
    out({ jsonrpc: "2.0", id: m.id, result: { stopReason: ${JSON.stringify(stopReason)} } });
  }
});
`,
    );

  it("lines that are not JSON-RPC around the agent's answers are ignored: the turn is judged by its answers", async () => {
    const run = await e2e.run(["-q", "-n", "--acp", scriptedAgent("end_turn"), "hi"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ class: "success", text: "an answer" });
    expect((run.events[0] as { acp?: unknown }).acp).toEqual({
      name: "agent-end_turn",
      agent_name: "scripted",
      version: "0.0.1",
      protocol_version: 1,
    });
  });

  it("an agent that still writes after oc-exec closed the connection: ignored, no crash, the exit stands", async () => {
    // Answers as scriptedAgent does; once its stdin ends (oc-exec closed the connection), it ignores
    // SIGTERM and still writes to its stdout before it exits.
    const agent = agentScript(
      "leaky-agent",
      `#!/usr/bin/env node
const out = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const rl = require("node:readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
  if (m.method === "session/new") out({ jsonrpc: "2.0", id: m.id, result: { sessionId: "s1" } });
  if (m.method === "session/prompt") {
    out({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "done" } } } });
    out({ jsonrpc: "2.0", id: m.id, result: { stopReason: "end_turn" } });
  }
});
process.on("SIGTERM", () => {});
rl.on("close", () => {
  setTimeout(() => {
    process.stdout.write("late-line\\n" + JSON.stringify({ jsonrpc: "2.0", method: "x" }) + "\\n");
    setTimeout(() => process.exit(0), 100);
  }, 200);
});
`,
    );
    const run = await e2e.run(["-q", "-n", "--acp", agent, "hi"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ class: "success", text: "done" });
    expect(run.stderr).not.toMatch(/ERR_INVALID_STATE|Controller is already closed/);
  });

  it("a permission asked for another session than the turn's (an earlier run's, on a shared agent) is refused, --auto or not; the turn's own is granted", async () => {
    // Mid-turn it asks for a command in session "old", then for one in its turn's "s1", and says
    // what each answer was.
    const agent = agentScript(
      "two-sessions-agent",
      `#!/usr/bin/env node
const out = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const waiting = new Map();
let prompt = null;
const ask = (id, sessionId) => out({ jsonrpc: "2.0", id, method: "session/request_permission", params: { sessionId, toolCall: { toolCallId: "t" + id, kind: "execute", title: "echo hi", rawInput: { command: "echo hi" } }, options: [{ optionId: "yes", name: "Allow", kind: "allow_once" }, { optionId: "no", name: "Reject", kind: "reject_once" }] } });
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
  if (m.method === "session/new") out({ jsonrpc: "2.0", id: m.id, result: { sessionId: "s1" } });
  if (m.method === "session/prompt") { prompt = m.id; ask(100, "old"); }
  if (m.id === 100 && !m.method) { waiting.set("old", m.result.outcome.optionId); ask(101, "s1"); }
  if (m.id === 101 && !m.method) {
    const text = "old: " + waiting.get("old") + ", s1: " + m.result.outcome.optionId;
    out({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } } });
    out({ jsonrpc: "2.0", id: prompt, result: { stopReason: "end_turn" } });
  }
});
`,
    );
    const run = await e2e.run(["-q", "-n", "--acp", agent, "--auto", "hi"]);
    expect(run.result.text).toBe("old: no, s1: yes");
  });

  it.each([
    ["refusal", "AgentRefused"],
    ["max_turn_requests", "AgentTurnLimit"],
  ])("a turn the agent ends with %s: agent_error (exit 1), %s", async (stopReason, name) => {
    const run = await e2e.run(["-q", "-n", "--acp", scriptedAgent(stopReason), "hi"]);
    expect(run.code).toBe(1);
    expect(run.result.error).toMatchObject({ name });
  });
});

describe("--acp: the turn's other paths, as on `opencode run`", () => {
  it("--verify: a failing check sends the agent back in the session; the repair passes it (exit 0, two rounds)", async () => {
    const dir = join(e2e.home.root, `acp-verify-${randomUUID().slice(0, 8)}`);
    mkdirSync(dir);
    const m = `acp-verify-${randomUUID().slice(0, 8)}`;
    const run = await e2e.run(
      [
        "-q",
        "--acp",
        "opencode",
        "--auto",
        "--verify",
        "test -f fixed.txt || { echo 'fixed.txt is missing'; exit 3; }",
        `scenario:verify-fix ${m}`,
      ],
      { cwd: dir },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ class: "success", text: "Fixed: the check passes now." });
    expect(existsSync(join(dir, "fixed.txt"))).toBe(true);
    const finished = run.events.filter((e) => e.type === "verify.finished") as {
      round: number;
      passed: boolean;
      exit_code: number;
      output: string;
    }[];
    expect(finished.map((e) => [e.round, e.passed, e.exit_code, e.output])).toEqual([
      [1, false, 3, "fixed.txt is missing"],
      [2, true, 0, ""],
    ]);
    // The repair is a prompt in the turn's session: one session, the turn's request and the repair's two.
    expect(new Set(run.events.flatMap((e) => (e.session_id ? [e.session_id] : []))).size).toBe(1);
    expect(e2e.requestsFor(m)).toHaveLength(3);
  }, 90_000);

  // The agent is started before the turn: its first update waits on the model, --idle-timeout's to
  // judge (6 s here), never the start-up timeout's minute. -m is set again on the continued session.
  it("--retry: a stalled first attempt is cancelled at --idle-timeout and the prompt sent again in the same session (exit 0, attempt 2)", async () => {
    const m = `acp-retry-${randomUUID().slice(0, 8)}`;
    const run = await e2e.run([
      "-q",
      "--acp",
      "opencode",
      "-m",
      "fake/fake-model",
      "--retry",
      "1",
      "--idle-timeout",
      "6s",
      "--retry-delay",
      "0",
      `scenario:stall-once ${m}`,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ class: "success", text: "Answered on a later try.", attempts: 2 });
    expect(run.result.failed_attempts).toEqual([
      expect.objectContaining({ attempt: 1, class: "timeout", name: "TimeoutError" }),
    ]);
    const retry = run.events.find((e) => e.type === "retry") as { error?: { timeout?: unknown } } | undefined;
    expect(retry).toBeDefined();
    expect(JSON.stringify(run.result.failed_attempts)).toContain("--idle-timeout 6s");
    expect(new Set(run.events.flatMap((e) => (e.session_id ? [e.session_id] : []))).size).toBe(1);
    expect(e2e.requestsFor(m)).toHaveLength(2);
  }, 90_000);

  it("--junit: the report says what the stream said, stdout unchanged", async () => {
    const file = join(e2e.home.root, `acp-junit-${randomUUID().slice(0, 8)}.xml`);
    const run = await e2e.run(["-q", "--acp", "opencode", "--junit", file, "scenario:http-401 acp-junit"]);
    expect(run.code).toBe(4);
    const xml = readFileSync(file, "utf8");
    expect(xml).toContain('tests="1" failures="1" errors="0" skipped="0"');
    expect(xml).toContain(`<failure type="api_error"`);
    expect(xml).toContain(`exit 4: ${run.result.error!.name}: `);
    expect(run.types.at(-1)).toBe("result");
  }, 60_000);
});
