// The command line as a new user meets it: help, versions, resume, usage errors, and the checks
// that must refuse a turn before it starts. Real opencode where it matters, the fake elsewhere.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { FAKE_OPENCODE } from "../support/fixtures.js";
import { BIN, eventsOf, OWN_VERSION, runCliRaw } from "../support/run-cli.js";
import { screenFrames } from "../support/tmux.js";

const e2e = useE2E();

describe("help and versions", () => {
  it.each([[["--version", "-q"]], [["-q", "--version"]], [["--verbose", "--version"]]])(
    "%j prints both versions and exits 0",
    async (args) => {
      const run = await runCliRaw(args, { env: e2e.home.env });
      expect(run.code).toBe(0);
      expect(run.stdout.split("\n")).toEqual([
        `oc-exec ${OWN_VERSION}`,
        expect.stringMatching(/^opencode 1\.18\.33 \(.*opencode, tested\)$/),
        "",
      ]);
    },
  );

  it("--version --opencode X asks that binary", async () => {
    const env = { ...e2e.home.env, FAKE_OPENCODE_VERSION: "1.99.0" };
    const run = await runCliRaw(["--version", "--opencode", FAKE_OPENCODE], { env });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `oc-exec ${OWN_VERSION}\nopencode 1.99.0 (${FAKE_OPENCODE}, untested; oc-exec is tested with 1.0.185 to 1.18.33)\n`,
    );
  });

  it("`help` and `help doctor` show help, as --help advertises, and run no turn", async () => {
    const help = await runCliRaw(["help"], { env: e2e.home.env });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: oc-exec \[options\] \[command\] \[prompt\.\.\.\]/);
    expect(help.stdout).toContain("  resume [session]");
    const doctor = await runCliRaw(["help", "doctor"], { env: e2e.home.env });
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(/^Usage: oc-exec doctor \[options\]/);
    expect(e2e.server.requests).toEqual([]);
  });

  it("--help -q into a reader that leaves early: no EPIPE trace, exit 0", () => {
    const out = spawnSync(
      "bash",
      ["-c", `"${process.execPath}" "${BIN}" --help -q | head -3; echo "status=\${PIPESTATUS[0]}"`],
      {
        env: e2e.home.env,
        encoding: "utf8",
      },
    );
    expect(out.stdout.split("\n").slice(0, 1)).toEqual(["Usage: oc-exec [options] [command] [prompt...]"]);
    expect(out.stdout).toContain("status=0");
    expect(out.stderr).toBe("");
  });
});

describe("usage errors", () => {
  it("-q is honoured when a flag is invalid: the error and the hint, no summary", async () => {
    const run = await e2e.run(["-q", "--modle", "x", "hi"]);
    expect(run.code).toBe(5);
    expect(run.types).toEqual(["run.started", "result"]);
    expect(run.stderr).toBe(
      "error: unknown option '--modle'\n(Did you mean --model?)\nRun oc-exec --help for usage.\n",
    );
  });

  it("compound durations and bare seconds are accepted; 0 turns the timeout off", async () => {
    const env = { ...e2e.home.env, FAKE_OPENCODE_MODE: "ok" };
    for (const timeout of ["1m30s", "90", "0"]) {
      const run = await e2e.run(["-q", "--opencode", FAKE_OPENCODE, "--timeout", timeout, "hi"], { env });
      expect(run.code).toBe(0);
      expect(run.result.class).toBe("success");
    }
  });
});

describe("a turn's options given before a subcommand", () => {
  it("are refused with exit 5 before anything runs, never dropped (a batch ran without its budget)", async () => {
    const dir = e2e.workspace();
    writeFileSync(join(dir, "t.jsonl"), '{"id":"a","prompt":"scenario:plain hi"}\n');
    const before = e2e.server.requests.length;
    const batch = await e2e.runRaw(["--max-cost-usd", "0.5", "-q", "batch", "t.jsonl"], { cwd: dir });
    expect(batch.code).toBe(5);
    const message =
      "--max-cost-usd, --quiet were given before `batch`, where they would not apply to it: put them after `batch` (oc-exec batch --help lists what it takes)";
    expect(batch.stderr).toContain(`oc-exec batch: ${message}`);
    const lines = batch.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; problems?: string[] });
    expect(lines.map((l) => l.type)).toEqual(["batch.result"]);
    expect(JSON.stringify(lines[0])).toContain(message);
    for (const args of [
      ["--sandbox", "workspace-write", "server", "start"],
      ["--dir", dir, "doctor"],
      ["--full-auto", "batch", "t.jsonl"],
    ]) {
      const run = await e2e.runRaw(args, { cwd: dir });
      expect(run.code, args.join(" ")).toBe(5);
      expect(run.stderr).toMatch(/ given before `(server start|doctor|batch)`, where it would not apply to it/);
    }
    expect(e2e.server.requests.length).toBe(before);
    // After the subcommand they apply as ever.
    const after = await e2e.runRaw(["batch", "t.jsonl", "--max-cost-usd", "0.5", "-q"], { cwd: dir });
    expect(after.code).toBe(0);
  });
});

describe("resume, wherever it stands", () => {
  const recorded = (file: string) => JSON.parse(readFileSync(file, "utf8")) as { argv: string[]; stdin: string };
  it.each([
    [
      ["-q", "resume", "ses_fake0000000000000000000001", "go on"],
      ["--session", "ses_fake0000000000000000000001"],
      "go on",
    ],
    [["-q", "resume", "--last", "go on"], ["--continue"], "go on"],
    [
      ["--color", "never", "-q", "resume", "ses_fake0000000000000000000001", "go on"],
      ["--session", "ses_fake0000000000000000000001"],
      "go on",
    ],
  ])("%j", async (args, flags, prompt) => {
    const record = join(mkdtempSync(join(e2e.home.root, "rec-")), "call.json");
    const env = { ...e2e.home.env, FAKE_OPENCODE_MODE: "ok", FAKE_OPENCODE_RECORD: record };
    const run = await e2e.run(["--opencode", FAKE_OPENCODE, ...args], { env });
    expect(run.code).toBe(0);
    const call = recorded(record);
    const at = call.argv.indexOf(flags[0]!);
    expect(call.argv.slice(at, at + flags.length)).toEqual(flags);
    expect(call.stdin).toBe(prompt);
  });
});

describe("--opencode with a relative path", () => {
  it("still finds the binary when the workspace is elsewhere", async () => {
    const { relative } = await import("node:path");
    const ws = e2e.workspace();
    const run = await e2e.run(["-q", "--dir", ws, "--opencode", relative(e2e.home.workspace, FAKE_OPENCODE), "hi"], {
      extraEnv: { FAKE_OPENCODE_MODE: "ok" },
    });
    expect(run.code).toBe(0);
    expect(run.events[0]).toMatchObject({ type: "run.started", opencode: { path: FAKE_OPENCODE } });
  });
});

describe("refused before the turn starts", () => {
  it("an OPENCODE_PERMISSION that is not valid JSON: config_error, 5, and no model call (opencode would ignore it and run bash)", async () => {
    const before = e2e.server.requests.length;
    const env = { ...e2e.home.env, OPENCODE_PERMISSION: '{"bash": "deny"' };
    const run = await e2e.run(["-q", "scenario:tool run echo"], { env });
    expect(run.code).toBe(5);
    expect(run.types).toEqual(["run.started", "result"]);
    expect(run.result.error).toMatchObject({ name: "PermissionConfigError" });
    expect(run.result.error!.message).toMatch(
      /^OPENCODE_PERMISSION is not valid JSON \(.*\); opencode would ignore it/,
    );
    expect(e2e.server.requests.length).toBe(before);
    const doctor = await runCliRaw(["doctor"], { env, cwd: e2e.home.workspace });
    expect(doctor.code).toBe(5);
    expect(doctor.stderr).toMatch(/✗ inherited permissions: OPENCODE_PERMISSION is not valid JSON/);
  });

  it("-o into a directory that does not exist: config_error, 5, before any model call", async () => {
    const before = e2e.server.requests.length;
    const run = await e2e.run(["-q", "-o", "/nonexistent/dir/answer.txt", "scenario:plain hi"]);
    expect(run.code).toBe(5);
    expect(run.types).toEqual(["run.started", "result"]);
    expect(run.result.error).toEqual({
      name: "OutputPathError",
      message: "--output-last-message /nonexistent/dir/answer.txt: the directory /nonexistent/dir does not exist",
      status_code: null,
      retryable: null,
    });
    expect(e2e.server.requests.length).toBe(before);
  });

  it("-o where no file can be made (/proc), and an --output-schema ajv cannot use: config_error, 5, before any model call", async () => {
    const before = e2e.server.requests.length;
    const proc = await e2e.run(["-q", "-o", "/proc/answer.md", "scenario:plain hi"]);
    expect(proc.code).toBe(5);
    expect(proc.types).toEqual(["run.started", "result"]);
    expect(proc.result.error?.name).toBe("OutputPathError");
    expect(proc.result.error?.message).toMatch(
      /^--output-last-message \/proc\/answer\.md: cannot create a file in \/proc \(\w+\)$/,
    );
    const dir = e2e.workspace();
    writeFileSync(join(dir, "schema.json"), '{"type":"objekt"}');
    const schema = await e2e.run(["-q", "--output-schema", "schema.json", "scenario:json answer"], { cwd: dir });
    expect(schema.code).toBe(5);
    expect(schema.types).toEqual(["run.started", "result"]);
    expect(schema.result.error?.name).toBe("OutputSchemaError");
    expect(schema.result.error?.message).toMatch(
      /^--output-schema is not a JSON Schema ajv can use: schema is invalid: /,
    );
    expect(e2e.server.requests.length).toBe(before);
  });
});

describe("progress", () => {
  it("the spinner shows the running tool from its first sign until it finishes", async () => {
    const env = { ...e2e.home.env, FAKE_OPENCODE_MODE: "running-tool", FAKE_TOOL_MS: "2500" };
    const frames = await screenFrames(`${process.execPath} ${BIN} --opencode ${FAKE_OPENCODE} hi > /dev/null`, env, {
      rows: 20,
      timeoutMs: 30_000,
    });
    expect(frames.some((f) => /step 1 · running bash · 0 tokens/.test(f))).toBe(true);
    expect(frames.at(-1)).toContain("exit=0");
    expect(frames.at(-1)).not.toContain("running bash");
  });
});

describe("the package", () => {
  it("ships the license package.json names", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { license: string };
    expect(pkg.license).toBe("MIT");
    expect(readFileSync(new URL("../../LICENSE", import.meta.url), "utf8")).toMatch(/^MIT License\n/);
  });
});

describe("--fail-on: a verdict CI can trust", () => {
  it("an unknown condition is a usage error, 5, naming the ones there are", async () => {
    const run = await e2e.run(["-q", "--fail-on", "tool-error,no-tests", "scenario:plain hi"]);
    expect(run.code).toBe(5);
    expect(run.types).toEqual(["run.started", "result"]);
    expect(run.result.error).toMatchObject({
      name: "UsageError",
      message: '--fail-on does not know "no-tests"; it takes tool-error, no-changes, no-message, mcp-unavailable',
    });
    expect(run.stderr).toContain('oc-exec: --fail-on does not know "no-tests"');
  });

  it("tool-error: a failed tool call fails the turn with the tool and its error; without one, success", async () => {
    const failed = await e2e.run(["-q", "--fail-on", "tool-error", "scenario:read-missing look"]);
    expect(failed.code).toBe(1);
    expect(failed.result.class).toBe("agent_error");
    expect(failed.result.text).toBe("There is no such file.");
    expect(failed.result.error!.name).toBe("FailOnCondition");
    expect(failed.result.error!.message).toMatch(
      /^--fail-on tool-error: tool read \(call call_1_0\) failed: .*missing\.txt/,
    );
    const fine = await e2e.run(["-q", "--fail-on", "tool-error", "scenario:tool run echo"]);
    expect(fine.code).toBe(0);
    expect(fine.result.class).toBe("success");
  });

  it("no-changes: no file written fails the turn; a written file passes", async () => {
    const failed = await e2e.run(["-q", "--fail-on", "no-changes", "scenario:plain hi"]);
    expect(failed.code).toBe(1);
    expect(failed.result.error).toEqual({
      name: "FailOnCondition",
      message: "--fail-on no-changes: no file changed",
      status_code: null,
      retryable: null,
    });
    const fine = await e2e.run(["-q", "--fail-on", "no-changes", "scenario:write a note"], { cwd: e2e.workspace() });
    expect(fine.code).toBe(0);
    expect(fine.result.files_changed).toEqual([{ path: "notes.txt", change: "added" }]);
  });

  it("no-message: a turn that ends without a word fails; an answer passes; conditions combine", async () => {
    const failed = await e2e.run(["-q", "--fail-on", "tool-error", "--fail-on", "no-message", "scenario:empty"]);
    expect(failed.code).toBe(1);
    expect(failed.result.text).toBeNull();
    expect(failed.result.error!.message).toBe("--fail-on no-message: the turn ended with no final assistant message");
    const fine = await e2e.run(["-q", "--fail-on", "no-message,tool-error", "scenario:plain hi"]);
    expect(fine.code).toBe(0);
    // Failures keep their own class: --fail-on only judges what would have been a success.
    const api = await e2e.run(["-q", "--fail-on", "no-message", "scenario:http-401"]);
    expect(api.code).toBe(4);
  });
});

describe("permission patterns, proved against the real opencode", () => {
  it("an allowed pattern runs; the other patterns of its key are refused: permission.denied with the command, exit 2", async () => {
    const ok = await e2e.run(["-q", "--allow", "bash:echo *", "scenario:tool run echo"]);
    expect(ok.code).toBe(0);
    expect(eventsOf(ok, "tool")[0]).toMatchObject({ tool: "bash", status: "completed", output: "hi\n" });
    const refused = await e2e.run([
      "-q",
      "--allow",
      "bash:npm test",
      "--allow",
      "bash:git *",
      "scenario:tool run echo",
    ]);
    expect(refused.code).toBe(2);
    expect(eventsOf(refused, "permission.denied")).toMatchObject([
      { permission: "bash", pattern: "echo hi", tool: "bash", call_id: "call_1_0" },
    ]);
    expect(refused.result.tools).toEqual({ total: 1, failed: 0, denied: 1 });
    expect(refused.result.error!.message).toMatch(
      /^the permission policy refused permission bash \(echo hi\): no rule allows it/,
    );
  });

  it("a denied pattern wins over an allowed one that also matches", async () => {
    const run = await e2e.run(["-q", "--allow", "bash:echo *", "--deny", "bash:echo hi", "scenario:tool run echo"]);
    expect(run.code).toBe(2);
    expect(eventsOf(run, "permission.denied")).toMatchObject([{ permission: "bash", pattern: "echo hi" }]);
  });

  it("a tool the policy removed is not invisible: the call the model made is a denial, exit 2", async () => {
    const run = await e2e.run(["-q", "--allow", "read", "scenario:tool run echo"]);
    expect(run.code).toBe(2);
    expect(eventsOf(run, "tool")[0]).toMatchObject({ tool: "bash", status: "denied", call_id: "call_1_0" });
    expect(eventsOf(run, "tool")[0]!.error).toMatch(/unavailable tool 'bash'/);
    expect(run.result.permission_denials).toEqual([
      { permission: "bash", pattern: null, tool: "bash", call_id: "call_1_0" },
    ]);
  });

  it.each([
    [["--allow", "bash:ls", "--deny", "bash:ls"], "bash:ls is in both --allow and --deny"],
    [["--allow", "bash:ls", "--deny", "bash"], "bash:ls is in both --allow and --deny"],
    [
      ["--allow", "todowrite:x"],
      "todowrite takes no patterns (only bash, edit, read, external_directory, webfetch, task, skill do): allow or deny the whole key",
    ],
  ])("%j is a usage error, 5", async (flags, message) => {
    const run = await e2e.run(["-q", ...flags, "scenario:plain hi"]);
    expect(run.code).toBe(5);
    expect(run.result.error).toMatchObject({ name: "UsageError", message });
  });
});

describe("doctor --probe", () => {
  it("sends one real request and says how long the model took; a model that fails is not ready, with its class", async () => {
    const ok = await runCliRaw(["doctor", "--probe"], { env: e2e.home.env, cwd: e2e.home.workspace });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatch(/^✓ probe: fake\/fake-model answered in \d+(ms|\.\ds) \(\d+ tokens\)$/m);
    const bad = await runCliRaw(["doctor", "--probe", "-m", "fake/nope"], {
      env: e2e.home.env,
      cwd: e2e.home.workspace,
    });
    expect(bad.code).toBe(5);
    expect(bad.stderr).toMatch(
      /^✗ probe: fake\/nope failed after .*: config_error \(exit 5\): Model not found: fake\/nope\./m,
    );
    const probes = e2e.requestsFor("Reply with the single word OK").length;
    const plain = await runCliRaw(["doctor"], { env: e2e.home.env, cwd: e2e.home.workspace });
    // No probe runs without --probe; the report says that only --probe checks the provider.
    expect(plain.stderr).not.toMatch(/^[✓✗] probe:/m);
    expect(plain.stderr).toContain("only --probe shows");
    expect(e2e.requestsFor("Reply with the single word OK").length).toBe(probes);
  });
});
