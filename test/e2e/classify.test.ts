// Every way a turn can end, proven by running oc-exec: exit status, result.class, a useful
// message. The real opencode binary wherever it produces the case in seconds; recorded fixtures
// replayed by the fake opencode for the cases opencode retries for over a minute, and for
// crashes, silence and garbage.
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { FAKE_OPENCODE, loadFixture } from "../support/fixtures.js";
import { eventsOf } from "../support/run-cli.js";

const e2e = useE2E();

describe("classification with the real opencode", () => {
  it("a tool call auto-rejected because its permission is ask: approval_denied, 2", async () => {
    const run = await e2e.run(["-q", "scenario:tool run echo"], {
      extraEnv: { OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) },
    });
    expect(run.code).toBe(2);
    expect(run.result.class).toBe("approval_denied");
    expect(eventsOf(run, "tool")[0]).toMatchObject({
      tool: "bash",
      status: "denied",
      error: "The user rejected permission to use this specific tool call.",
    });
    expect(eventsOf(run, "permission.denied")).toMatchObject([
      { permission: "bash", pattern: "echo hi", tool: "bash", call_id: "call_1_0" },
    ]);
    expect(run.result.permission_denials).toEqual([
      { permission: "bash", pattern: "echo hi", tool: "bash", call_id: "call_1_0" },
    ]);
    expect(run.result.tools).toEqual({ total: 1, failed: 0, denied: 1 });
    expect(run.result.error!.message).toBe(
      "opencode needed permission bash (echo hi), and nobody can approve it in a headless run. Allow it with --allow bash (or --allow 'bash:echo hi') together with every other key the task needs (--allow denies each key it does not name), or approve whatever is asked with --auto.",
    );
    expect(run.result.opencode.exit_code).toBe(0);
  });

  it("a read outside the workspace (external_directory): approval_denied, 2", async () => {
    const run = await e2e.run(["-q", "scenario:read-outside read it"]);
    expect(run.code).toBe(2);
    expect(run.result.permission_denials).toEqual([
      { permission: "external_directory", pattern: "/etc/*", tool: "read", call_id: "call_1_0" },
    ]);
  });

  it("ContextOverflowError, reported twice: context_overflow, 3", async () => {
    const run = await e2e.run(["-q", "scenario:context-overflow"]);
    expect(run.code).toBe(3);
    expect(run.result.class).toBe("context_overflow");
    expect(eventsOf(run, "error").map((e) => e.name)).toEqual(["ContextOverflowError", "ContextOverflowError"]);
    expect(run.result.error).toMatchObject({
      name: "ContextOverflowError",
      message: expect.stringContaining("maximum context length is 128000 tokens"),
    });
  });

  it("APIError 401: api_error, 4, status and retryable, the key redacted", async () => {
    const run = await e2e.run(["-q", "scenario:http-401"]);
    expect(run.code).toBe(4);
    expect(run.result.error).toEqual({
      name: "APIError",
      message: "Incorrect API key provided: sk-[REDACTED]",
      status_code: 401,
      retryable: false,
    });
    expect(eventsOf(run, "error")[0]).toMatchObject({ class: "api_error", status_code: 401, retryable: false });
    expect(run.stdout + run.stderr).not.toContain("abcdefghijklmnop");
  });

  it("APIError 429 after opencode's retries: api_error, 4", async () => {
    const run = await e2e.run(["-q", "scenario:http-429"]);
    expect(run.code).toBe(4);
    expect(run.result.error).toEqual({
      name: "APIError",
      message: "Rate limit reached",
      status_code: 429,
      retryable: true,
    });
    // Each retry opencode made is visible as it happens, not only the final failure.
    const retries = eventsOf(run, "warning").filter((w) => w.code === "api_retry");
    expect(retries).toHaveLength(5); // opencode 1.18.33 retries a 429 five times, then gives up
    expect(
      retries.map(
        (w) =>
          /^opencode retried the model call \(retry (\d+)\) after \d+(ms|\.\ds): AI_APICallError: Rate limit reached$/.exec(
            w.message,
          )?.[1],
      ),
    ).toEqual(retries.map((_, i) => String(i + 1)));
  });

  it("unknown model: config_error, 5, with the real cause instead of 'Unexpected server error'", async () => {
    const run = await e2e.run(["-q", "-m", "fake/nope", "scenario:plain"]);
    expect(run.code).toBe(5);
    expect(run.result.error!.name).toBe("ProviderModelNotFoundError");
    expect(run.result.error!.message).toMatch(
      /^Model not found: fake\/nope\. \(opencode offers a provider's models only when its credentials are set/,
    );
    expect(run.stdout).not.toContain("Unexpected server error");
  });

  it("missing provider credentials: config_error, 5", async () => {
    const run = await e2e.run(["-q", "-m", "anthropic/claude-sonnet-4-5", "scenario:plain"]);
    expect(run.code).toBe(5);
    expect(run.result.error!.message).toMatch(/^Model not found: anthropic\/claude-sonnet-4-5\..*credentials are set/);
  });

  it("invalid OPENCODE_CONFIG_CONTENT: config_error, 5, with opencode's own message", async () => {
    const run = await e2e.run(["-q", "scenario:plain"], {
      extraEnv: { OPENCODE_CONFIG_CONTENT: JSON.stringify({ provider: 5 }) },
    });
    expect(run.code).toBe(5);
    expect(run.result.error!.message).toBe(
      "opencode refused to start: Configuration is invalid at OPENCODE_CONFIG_CONTENT\n↳ Expected object | undefined, got 5 provider",
    );
  });

  it("malformed opencode.json in the workspace: config_error, 5", async () => {
    const ws = e2e.workspace();
    writeFileSync(join(ws, "opencode.json"), '{"model": ');
    const run = await e2e.run(["-q", "--dir", ws, "scenario:plain"]);
    expect(run.code).toBe(5);
    expect(run.result.error!.message).toContain(`Config file at ${ws}/opencode.json is not valid JSON(C)`);
    expect(run.result.error!.message).toContain("ValueExpected at line 1, column 11");
  });

  it("--session with an unknown id: config_error, 5", async () => {
    const run = await e2e.run(["-q", "--session", "ses_doesnotexist", "scenario:plain"]);
    expect(run.code).toBe(5);
    expect(run.result.error!.message).toBe("opencode refused to start: Session not found");
  });

  it("the last step cut off (finish reason length): agent_error, 1", async () => {
    const run = await e2e.run(["-q", "scenario:length"]);
    expect(run.code).toBe(1);
    expect(run.result.error!.message).toBe(
      'the model\'s answer was cut off: the last step finished with reason "length" (output token limit)',
    );
    expect(run.result.text).toBe("This answer was cut");
  });
});

describe("classification of problems oc-exec finds itself", () => {
  it.each([
    [["--dir", "/nonexistent/dir"], "WorkspaceError", "--dir /nonexistent/dir does not exist"],
    [["--dir", "/etc/hostname"], "WorkspaceError", "--dir /etc/hostname is not a directory"],
    [["--file", "/nonexistent/file.txt"], "FileNotFound", "--file /nonexistent/file.txt does not exist"],
    [["--opencode", "/nonexistent/opencode"], "OpencodeNotFound", "opencode binary not found at /nonexistent/opencode"],
    [["--timeout", "soon"], "UsageError", '--timeout takes a duration like 1500ms, 90s or 5m, not "soon"'],
  ])("%j: config_error, 5", async (args, name, message) => {
    const run = await e2e.run(["-q", ...args, "hi"]);
    expect(run.code).toBe(5);
    expect(run.types).toEqual(["run.started", "result"]);
    expect(run.result).toMatchObject({ class: "config_error", exit_code: 5, error: { name, message } });
  });

  it("a binary that is not executable: config_error, 5", async () => {
    const path = join(e2e.home.root, "not-executable");
    writeFileSync(path, "#!/bin/sh\n");
    chmodSync(path, 0o644);
    const run = await e2e.run(["-q", "--opencode", path, "hi"]);
    expect(run.code).toBe(5);
    expect(run.result.error).toMatchObject({ name: "OpencodeNotFound", message: `${path} is not an executable file` });
  });

  it("a bad flag: config_error, 5, usage on stderr, still run.started and result", async () => {
    const run = await e2e.run(["--modle", "x", "hi"]);
    expect(run.code).toBe(5);
    expect(run.types).toEqual(["run.started", "result"]);
    expect(run.result.error).toMatchObject({
      name: "UsageError",
      message: "unknown option '--modle'\n(Did you mean --model?)",
    });
    expect(run.stderr).toContain("error: unknown option '--modle'");
    expect(run.stderr).toContain("Run oc-exec --help for usage.");
  });

  it("no prompt at all: config_error, 5", async () => {
    const run = await e2e.run(["-q"], { stdin: "" });
    expect(run.code).toBe(5);
    expect(run.result.error).toMatchObject({
      name: "UsageError",
      message: "no prompt: stdin was empty and no prompt argument was given",
    });
  });
});

describe("classification with the fake opencode", () => {
  const fake = (mode: string, extra: Record<string, string> = {}) => ({
    extraEnv: { OC_EXEC_OPENCODE: FAKE_OPENCODE, FAKE_OPENCODE_MODE: mode, ...extra },
  });
  const replay = (scenario: string) => {
    const fixture = loadFixture("1.18.33", scenario)!;
    return { extraEnv: { OC_EXEC_OPENCODE: FAKE_OPENCODE, FAKE_OPENCODE_FIXTURE: fixture.dir } };
  };

  it("recorded HTTP 500 after a minute of retries: api_error, 4", async () => {
    const run = await e2e.run(["-q", "x"], replay("api-500"));
    expect(run.code).toBe(4);
    expect(run.result.error).toEqual({
      name: "APIError",
      message: "The server had an error while processing your request.",
      status_code: 500,
      retryable: true,
    });
  });

  it("recorded connection refused: api_error, 4, no status", async () => {
    const run = await e2e.run(["-q", "x"], replay("connection-refused"));
    expect(run.code).toBe(4);
    expect(run.result.error).toEqual({
      name: "APIError",
      message: "Cannot connect to API: Unable to connect. Is the computer able to access the url?",
      status_code: null,
      retryable: true,
    });
  });

  it("opencode dies by a signal with no error line: agent_error, 1, with its stderr", async () => {
    const run = await e2e.run(["-q", "x"], fake("crash"));
    expect(run.code).toBe(1);
    expect(run.result.opencode).toEqual({ exit_code: null, signal: "SIGSEGV" });
    expect(run.result.error!.message).toBe(
      "opencode was killed by SIGSEGV with no error event; its stderr ended with:\npanic: something broke inside opencode",
    );
  });

  it("opencode exits 1 before any JSON: agent_error, 1, with its stderr", async () => {
    const run = await e2e.run(["-q", "x"], fake("exit-early"));
    expect(run.code).toBe(1);
    expect(run.result.error!.message).toBe(
      "opencode exited with status 1 before printing any JSON event; its stderr ended with:\nfatal: could not open database",
    );
  });

  it("opencode exits 0 with no output at all (as with --attach): agent_error, 1, not success", async () => {
    const run = await e2e.run(["-q", "x"], fake("silent"));
    expect(run.code).toBe(1);
    expect(run.result.error!.message).toBe(
      "opencode exited with status 0 but printed no JSON event; it printed nothing on stderr",
    );
  });

  it("opencode prints only garbage: agent_error, 1, and every line is a warning", async () => {
    const run = await e2e.run(["-q", "x"], fake("garbage"));
    expect(run.code).toBe(1);
    expect(eventsOf(run, "warning").map((w) => w.code)).toEqual([
      "non_json_line",
      "non_json_line",
      "non_object_json",
      "non_json_line",
    ]);
    expect(run.result.stream).toEqual({ json_lines: 0, other_lines: 4, blank_lines: 0, warnings: 4 });
    expect(run.result.error!.message).toContain("printed no JSON event (only 4 non-JSON line(s))");
  });

  it.each([
    ["APIError", { message: "Forbidden", statusCode: 403, isRetryable: false }, 4, "api_error", "Forbidden"],
    [
      "ProviderAuthError",
      { providerID: "anthropic", message: "API key is missing" },
      5,
      "config_error",
      "API key is missing",
    ],
    [
      "MessageOutputLengthError",
      { message: "output exceeded the limit" },
      1,
      "agent_error",
      "output exceeded the limit",
    ],
    [
      "ContentFilterError",
      { message: "blocked by the content filter" },
      1,
      "agent_error",
      "blocked by the content filter",
    ],
    [
      "StructuredOutputError",
      { message: "the model did not return JSON" },
      1,
      "agent_error",
      "the model did not return JSON",
    ],
    ["MessageAbortedError", { message: "aborted" }, 1, "agent_error", "aborted"],
    [
      "UnknownError",
      { message: "Unexpected server error. Check server logs for details.", ref: "err_0000" },
      1,
      "agent_error",
      "Unexpected server error. Check server logs for details.",
    ],
  ] as const)(
    "an opencode %s line: class and exit from the error, even when opencode exits 0",
    async (name, data, code, cls, message) => {
      const run = await e2e.run(
        ["-q", "x"],
        fake("error-line", { FAKE_ERROR_NAME: name, FAKE_ERROR_DATA: JSON.stringify(data), FAKE_EXIT: "0" }),
      );
      expect(run.code).toBe(code);
      expect(run.result).toMatchObject({ class: cls, error: { name, message } });
      expect(run.result.opencode.exit_code).toBe(0);
    },
  );

  it("the 2.x error shape {type, message} still classifies", async () => {
    const run = await e2e.run(["-q", "x"], fake("v2-error"));
    expect(run.code).toBe(3);
    expect(run.result.error).toMatchObject({ name: "ContextOverflowError", message: "prompt is too long" });
  });

  it("an untested opencode version still runs, with a warning naming the tested range", async () => {
    // Its own path: versions are cached per binary path. A 1.x: from 2.x on, a release without
    // `run --standalone` gets no turn (test/e2e/releases.test.ts).
    const dir = join(e2e.home.root, "opencode-1.99.0");
    mkdirSync(dir);
    copyFileSync(FAKE_OPENCODE, join(dir, "opencode"));
    const run = await e2e.run(
      ["-q", "x"],
      fake("ok", { FAKE_OPENCODE_VERSION: "1.99.0", OC_EXEC_OPENCODE: join(dir, "opencode") }),
    );
    expect(run.code).toBe(0);
    expect(eventsOf(run, "run.started")[0]!.opencode.version).toBe("1.99.0");
    expect(eventsOf(run, "warning")[0]).toMatchObject({
      code: "untested_opencode",
      message: expect.stringContaining("1.0.185 to 1.18.33"),
    });
  });
});
