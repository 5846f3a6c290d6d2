import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { BIN, OWN_VERSION, runCliRaw } from "../support/run-cli.js";
import { checkStream } from "../support/schema-check.js";
import { screenFrames } from "../support/tmux.js";

const e2e = useE2E();
const ESC = "\u001b[";

/** Replaces what differs between two runs of the same turn: times, ids, durations. */
function stable(stdout: string): string {
  return stdout
    .replace(/"time":"[^"]+"/g, '"time":"T"')
    .replace(/ses_[A-Za-z0-9]+/g, "ses_X")
    .replace(/"duration_ms":\d+/g, '"duration_ms":0');
}

describe("a live terminal", () => {
  it("shows a spinner while the turn runs, then tool lines and the summary; stdout stays JSONL", async () => {
    const out = join(e2e.home.root, "tty.jsonl");
    const frames = await screenFrames(
      `cd ${e2e.home.workspace} && ${process.execPath} ${BIN} 'scenario:tool run echo' > ${out}`,
      e2e.home.env,
    );
    {
      const screen = frames.at(-1)!;
      // While it ran, the spinner line showed elapsed time, step and figures.
      expect(frames.some((f) => /\d+(\.\d)?(ms|s) · step [-\d] .*tokens · \$0/.test(f))).toBe(true);
      expect(screen).toMatch(/✓ bash {2}echo hi {2}\d/);
      expect(screen).toContain("✔ success (exit 0)");
      expect(screen).toMatch(/2 steps · 1 tool · 376 tokens \(350 in, 26 out\) · \$0/);
      expect(screen).toMatch(/resume: oc-exec --session ses_\w+ "\.\.\."/);
      expect(screen).toContain("exit=0");
      // The spinner is gone once the turn ends.
      expect(screen).not.toMatch(/step \d · .*tokens · \$0\s*$/m);
      checkStream(readFileSync(out, "utf8"));
    }
  });
});

describe("CI logs and colors", () => {
  it("no ANSI escapes when stderr is not a terminal, and none under NO_COLOR", async () => {
    const plain = await e2e.run(["scenario:plain hi"]);
    expect(plain.stderr).not.toContain(ESC);
    const forced = await e2e.run(["--color", "always", "scenario:plain hi"]);
    expect(forced.stderr).toContain(ESC);
    const noColor = await e2e.run(["--color", "always", "scenario:plain hi"], { extraEnv: { NO_COLOR: "1" } });
    expect(noColor.stderr).toContain(ESC); // --color always is explicit and wins over NO_COLOR
    const env = await e2e.run(["scenario:plain hi"], { extraEnv: { NO_COLOR: "1", FORCE_COLOR: "" } });
    expect(env.stderr).not.toContain(ESC);
  });

  it("stdout is the same with and without --quiet, apart from times and ids", async () => {
    const loud = await e2e.run(["--verbose", "--timestamps", "scenario:tool run echo"]);
    const quiet = await e2e.run(["-q", "scenario:tool run echo"]);
    expect(quiet.stderr).toBe("");
    expect(loud.stderr).not.toBe("");
    expect(stable(loud.stdout).replace(/"duration_ms":\d+/g, "")).toBe(
      stable(quiet.stdout).replace(/"duration_ms":\d+/g, ""),
    );
  });

  it("--timestamps prefixes lines; --verbose adds opencode's own stderr, without its colors", async () => {
    const run = await e2e.run(["--verbose", "--timestamps", "scenario:tool run echo"], {
      extraEnv: { OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) },
    });
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines.every((l) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /.test(l) || /^ {2}/.test(l))).toBe(true);
    expect(run.stderr).toContain("opencode: ! permission requested: bash (echo hi); auto-rejecting");
    // opencode's INFO log, which oc-exec reads for models and retries, is not shown.
    expect(run.stderr).not.toContain("level=INFO");
    expect(run.stderr).not.toContain(ESC);
  });

  it("GitHub Actions: annotations for warnings and errors, and a step summary", async () => {
    const summary = join(e2e.home.root, "summary.md");
    const run = await e2e.run(["scenario:http-401"], {
      extraEnv: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary },
    });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain("::error title=oc-exec APIError::Incorrect API key provided: sk-[REDACTED]");
    expect(run.stderr).toContain("::error title=oc-exec api_error (exit 4)::Incorrect API key provided: sk-[REDACTED]");
    const md = readFileSync(summary, "utf8");
    expect(md).toContain("### oc-exec");
    expect(md).toContain("| outcome | ❌ api_error (exit 4) |");
    expect(run.stdout).not.toContain("::error");
  });
});

describe("doctor and --version", () => {
  it("a place opencode cannot write its data: a turn is exit 5 naming it before anything runs; doctor says so, not the permission policy", async () => {
    // /proc/1 refuses writes even to root: what an unwritable HOME does to opencode (a raw EACCES, exit 1).
    const extraEnv = { XDG_DATA_HOME: "/proc/1/oc-exec-data" };
    const run = await e2e.run(["-q", "scenario:plain unwritable-data"], { extraEnv });
    expect(run.code).toBe(5);
    expect(run.result.error).toMatchObject({
      name: "StateNotWritable",
      message:
        "opencode writes its data to /proc/1/oc-exec-data/opencode, but /proc/1 is not writable: give HOME (or XDG_DATA_HOME) a writable directory",
    });
    expect(e2e.requestsFor("unwritable-data")).toEqual([]);
    const doctor = await runCliRaw(["doctor"], { env: { ...e2e.home.env, ...extraEnv }, cwd: e2e.home.workspace });
    expect(doctor.code).toBe(5);
    expect(doctor.stderr).toContain("✗ opencode's data: opencode writes its data to /proc/1/oc-exec-data/opencode");
    expect(doctor.stderr).not.toContain("permission policy");
  });

  it("doctor: ready with the scripted provider, exit 0; --json for machines; a missing model makes it exit 5", async () => {
    const ok = await runCliRaw(["doctor", "--json", "-m", "fake/fake-model"], {
      env: e2e.home.env,
      cwd: e2e.home.workspace,
    });
    expect(ok.code).toBe(0);
    const report = JSON.parse(ok.stdout) as { ready: boolean; checks: { name: string; ok: boolean }[] };
    expect(report.ready).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual([
      "opencode",
      "workspace",
      "inherited permissions",
      "opencode's data",
      "permission policy",
      "models",
      "requested model",
      "credentials",
      "sandbox",
      "traces",
    ]);
    expect(ok.stderr).toContain("✓ credentials: provider fake in OPENCODE_CONFIG_CONTENT (with an apiKey)");
    // Without --probe, doctor says what it could not check.
    expect(ok.stderr).toContain(
      "Whether the provider answers (a wrong key, no network, a gateway that is down) only --probe shows.",
    );
    expect(ok.stderr).toMatch(/^✓ models: \d+ models from 2 providers \(opencode, fake\)$/m);
    expect(ok.stdout + ok.stderr).not.toContain('"apiKey"');
    const bad = await runCliRaw(["doctor", "-m", "fake/nope"], { env: e2e.home.env, cwd: e2e.home.workspace });
    expect(bad.code).toBe(5);
    expect(bad.stderr).toContain("✗ requested model: fake/nope is not among the models opencode offers");
    expect(bad.stdout).toBe("");
    // A gateway configured in opencode's own config file, with its key there, is a credential too.
    const configDir = join(e2e.home.env.XDG_CONFIG_HOME!, "opencode");
    mkdirSync(configDir, { recursive: true });
    const configFile = join(configDir, "opencode.json");
    writeFileSync(
      configFile,
      JSON.stringify({
        provider: {
          gw: { npm: "@ai-sdk/openai-compatible", options: { baseURL: "http://127.0.0.1:9/v1", apiKey: "k" } },
        },
      }),
    );
    try {
      const gateway = await runCliRaw(["doctor"], { env: e2e.home.env, cwd: e2e.home.workspace });
      expect(gateway.stderr).toContain(`provider gw in ${configFile} (with an apiKey)`);
    } finally {
      rmSync(configFile);
    }
    const missing = await runCliRaw(["doctor", "--opencode", "/nonexistent"], { env: e2e.home.env });
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain("✗ opencode: opencode binary not found at /nonexistent");
  });

  it("--version prints both versions and whether opencode is a tested release", async () => {
    const run = await runCliRaw(["--version"], { env: e2e.home.env });
    expect(run.code).toBe(0);
    const [own, opencode, rest] = run.stdout.split("\n");
    expect(own).toBe(`oc-exec ${OWN_VERSION}`);
    expect(opencode).toMatch(/^opencode 1\.18\.33 \(.*opencode, tested\)$/);
    expect(rest).toBe("");
    expect(existsSync(BIN)).toBe(true);
  });
});
