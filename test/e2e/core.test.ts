// The core path against the real opencode binary and the scripted model server.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { eventsOf, OWN_VERSION } from "../support/run-cli.js";

const e2e = useE2E();

describe("oc-exec with the real opencode", () => {
  it("plain reply: the documented event sequence, exit 0", async () => {
    const run = await e2e.run(["-q", "scenario:plain say hello"]);
    expect(run.code).toBe(0);
    expect(run.types).toEqual(["run.started", "session.started", "step.started", "message", "step.finished", "result"]);
    const [started] = eventsOf(run, "run.started");
    expect(started).toMatchObject({
      seq: 0,
      session_id: null,
      schema_version: "1",
      oc_exec_version: OWN_VERSION,
      cwd: e2e.home.workspace,
      model: null,
      agent: null,
      resume: null,
    });
    expect(started!.opencode.version).toBe("1.18.33");
    const sessionId = run.events[1]!.session_id;
    expect(sessionId).toMatch(/^ses_/);
    expect(run.events.slice(1).every((e) => e.session_id === sessionId)).toBe(true);
    expect(eventsOf(run, "message")[0]!.text).toBe("Hello from the scripted model.");
    expect(run.result).toMatchObject({
      ok: true,
      exit_code: 0,
      class: "success",
      error: null,
      text: "Hello from the scripted model.",
      usage: { input: 120, output: 8, reasoning: 0, cache_read: 0, cache_write: 0, total: 128 },
      cost_usd: 0,
      steps: 1,
      tools: { total: 0, failed: 0, denied: 0 },
      files_changed: [],
      permission_denials: [],
      opencode: { exit_code: 0, signal: null },
      stream: { json_lines: 3, other_lines: 0, blank_lines: 0, warnings: 0 },
    });
    expect(run.stderr).toBe("");
  });

  it("tool call: a tool event, two steps, usage summed over both", async () => {
    const run = await e2e.run(["-q", "scenario:tool run echo"]);
    expect(run.code).toBe(0);
    expect(run.types).toEqual([
      "run.started",
      "session.started",
      "step.started",
      "tool",
      "step.finished",
      "step.started",
      "message",
      "step.finished",
      "result",
    ]);
    const [tool] = eventsOf(run, "tool");
    expect(tool).toMatchObject({
      call_id: "call_1_0",
      tool: "bash",
      status: "completed",
      input: { command: "echo hi", description: "Print hi" },
      output: "hi\n",
      output_truncated: false,
      error: null,
      title: "echo hi",
    });
    expect(tool!.duration_ms).toBeGreaterThanOrEqual(0);
    const steps = eventsOf(run, "step.finished");
    expect(steps.map((s) => [s.step, s.reason, s.usage.total])).toEqual([
      [1, "tool-calls", 170],
      [2, "stop", 206],
    ]);
    expect(run.result.usage).toEqual({
      input: 350,
      output: 26,
      reasoning: 0,
      cache_read: 0,
      cache_write: 0,
      total: 376,
    });
    expect(run.result).toMatchObject({
      steps: 2,
      tools: { total: 1, failed: 0, denied: 0 },
      text: "The command printed hi.",
    });
  });

  it("a file-writing tool yields file.changed and result.files_changed", async () => {
    const ws = e2e.workspace();
    const run = await e2e.run(["-q", "--dir", ws, "scenario:write a note"]);
    expect(run.code).toBe(0);
    expect(eventsOf(run, "file.changed").map((e) => [e.path, e.change])).toEqual([["notes.txt", "added"]]);
    expect(run.result.files_changed).toEqual([{ path: "notes.txt", change: "added" }]);
  });

  it("prompt arguments and piped stdin combine: arguments, a blank line, then stdin", async () => {
    const run = await e2e.run(["-q", "scenario:echo use it"], { stdin: "context" });
    expect(run.code).toBe(0);
    expect(e2e.requestsFor("scenario:echo use it").at(-1)!.userText).toBe("scenario:echo use it\n\ncontext");
    expect(run.result.text).toBe("you said: scenario:echo use it\n\ncontext");
  });

  it("a prompt argument with spaces reaches the model byte for byte, unquoted", async () => {
    const run = await e2e.run(["-q", "scenario:echo", 'two  spaces "quoted"']);
    expect(run.code).toBe(0);
    expect(run.result.text).toBe('you said: scenario:echo two  spaces "quoted"');
  });

  it("a 300 KB prompt on stdin reaches the model whole", async () => {
    const big = `scenario:echo-length ${"x".repeat(300 * 1024)} END-OF-PROMPT`;
    const run = await e2e.run(["-q", "-"], { stdin: big });
    expect(run.code).toBe(0);
    const seen = e2e.requestsFor("scenario:echo-length").at(-1)!.userText;
    expect(seen).toBe(big);
    expect(run.result.text).toBe(`received ${big.length} chars ending ${JSON.stringify(big.slice(-20))}`);
  });

  it("a stdin pipe that never closes does not hang: a warning, then the turn runs", async () => {
    const run = await e2e.run(["-q", "--stdin-timeout", "1s", "scenario:plain hi"], { stdin: "never" });
    expect(run.code).toBe(0);
    expect(run.types).toEqual([
      "run.started",
      "warning",
      "session.started",
      "step.started",
      "message",
      "step.finished",
      "result",
    ]);
    expect(eventsOf(run, "warning")[0]).toMatchObject({ code: "stdin_timeout" });
    expect(eventsOf(run, "warning")[0]!.message).toContain("--stdin-timeout 1s");
    expect(run.result.stream.warnings).toBe(1);
  });

  it("--prompt-file supplies the prompt", async () => {
    const file = join(e2e.home.root, "prompt.txt");
    writeFileSync(file, "scenario:echo from a file\nsecond line");
    const run = await e2e.run(["-q", "--prompt-file", file]);
    expect(run.code).toBe(0);
    expect(run.result.text).toBe("you said: scenario:echo from a file\nsecond line");
  });

  it("progress goes to stderr as plain lines when stderr is not a terminal; stdout stays JSONL", async () => {
    const run = await e2e.run(["scenario:tool run echo"]);
    expect(run.code).toBe(0);
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^oc-exec \d+\.\d+\.\d+ · opencode 1\.18\.33 · /);
    expect(lines).toContain(`session ${run.result.session_id}`);
    expect(lines.some((l) => /^✓ bash {2}echo hi {2}\d/.test(l))).toBe(true);
    expect(lines).toContain("step 1 finished (tool-calls) · 170 tokens · $0");
    expect(lines).toContain("✔ success (exit 0)");
    expect(run.stderr).not.toContain("\u001b[");
  });
});
