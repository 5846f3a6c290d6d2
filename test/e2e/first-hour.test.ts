// What a CI author hit in their first hour, each checked the way they met it.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { BatchResult, OcEvent, ResultEvent } from "../../src/contract/schema.js";
import { FAKE_OPENCODE } from "../support/fixtures.js";
import { BIN, parseLines, runCliRaw } from "../support/run-cli.js";

const home = mkdtempSync(join(tmpdir(), "oc-exec-first-hour-"));
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, "config") };
const hasScript = spawnSync("script", ["--version"]).status === 0;
if (!hasScript) console.warn("SKIPPED: the 0-column terminal tests need `script` (util-linux), which is not installed");

/** Runs oc-exec in a pty that reports 0 columns (as `script` under CI does), stdout to a file. */
function inZeroColumnPty(args: string[], out: string): Promise<{ code: number | null; ptyBytes: number; ms: number }> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn("script", ["-qec", `stty cols 0 rows 0; exec ${quoted} > '${out}'`, "/dev/null"], {
      env,
      cwd: home,
      stdio: ["ignore", "pipe", "ignore"],
    });
    let ptyBytes = 0;
    child.stdout.on("data", (chunk: Buffer) => (ptyBytes += chunk.length));
    // The bug this guards against never ended by itself: give up long before the test's own limit.
    const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (code) => {
      clearTimeout(guard);
      resolve({ code, ptyBytes, ms: Date.now() - started });
    });
  });
}

afterAll(() => rmSync(home, { recursive: true, force: true }));

describe.skipIf(!hasScript)("a terminal that reports 0 columns", () => {
  it("plain lines on stderr, the turn ends with its result, and stderr stays small", async () => {
    const out = join(home, "ok.jsonl");
    const run = await inZeroColumnPty(["--rehearse", "success", "x"], out);
    expect(run.code).toBe(0);
    const events = parseLines(readFileSync(out, "utf8"));
    expect(events[0]!.type).toBe("run.started");
    expect((events.at(-1) as ResultEvent).class).toBe("success");
    expect(run.ptyBytes).toBeLessThan(20_000);
  });

  it("--timeout still fires: the timers are not starved by the progress display", async () => {
    const out = join(home, "slow.jsonl");
    const run = await inZeroColumnPty(["--rehearse", "slow", "--timeout", "2s", "x"], out);
    expect(run.code).toBe(124);
    expect((parseLines(readFileSync(out, "utf8")).at(-1) as ResultEvent).class).toBe("timeout");
    expect(run.ptyBytes).toBeLessThan(20_000);
  });
});

describe("batch --resume with a file that is not the earlier run", () => {
  it("garbage, or the stream of other tasks: exit 5 before anything runs, naming the file and what is wrong", async () => {
    const tasks = join(home, "tasks.jsonl");
    writeFileSync(tasks, '{"id":"a","prompt":"x"}\n{"id":"b","prompt":"y"}\n');
    const garbage = join(home, "garbage.bin");
    writeFileSync(garbage, Buffer.from([0, 1, 2, 27, 91, 50, 74, 10, 255, 254, 10]));
    const other = join(home, "other.jsonl");
    writeFileSync(other, `${JSON.stringify({ type: "result", seq: 3, task_id: "zzz", class: "success" })}\n`);
    for (const [file, what] of [
      [garbage, "is not an oc-exec batch stream"],
      [other, "is the stream of other tasks"],
    ] as const) {
      const run = await runCliRaw(["batch", tasks, "--resume", file], { env, cwd: home });
      expect(run.code).toBe(5);
      const events = parseLines(run.stdout);
      expect(events.map((e) => e.type)).toEqual(["batch.result"]);
      expect((events[0] as BatchResult).problems).toEqual([expect.stringContaining(`--resume ${file} ${what}`)]);
      expect(run.stderr).toContain(`--resume ${file} ${what}`);
    }
  });
});

describe("stderr agrees with the exit status, and messages name what the user can do", () => {
  it("`| head -1`: exit 141, and stderr says stdout was closed, not that opencode failed", async () => {
    const cmd = `'${process.execPath}' '${BIN}' --rehearse success x | head -1 > /dev/null`;
    const run = spawnSync("bash", ["-o", "pipefail", "-c", cmd], { env, cwd: home, encoding: "utf8" });
    expect(run.status).toBe(141);
    expect(run.stderr).toContain(
      "oc-exec: stdout was closed by its reader (e.g. | head): the turn was stopped and its result not written; exit 141",
    );
    expect(run.stderr).not.toContain("agent_error");
    expect(run.stderr).not.toContain("OpencodeFailed");
  });

  it("a rehearsal offers no resume command (its throwaway HOME is gone); a stall says what fired", async () => {
    const run = await runCliRaw(["--rehearse", "stall", "--idle-timeout", "2s", "x"], { env, cwd: home });
    expect(run.code).toBe(124);
    expect(run.stderr).not.toContain("resume: oc-exec --session");
    const result = parseLines(run.stdout).at(-1) as ResultEvent;
    expect(result.error?.message).toBe(
      "the idle timeout (--idle-timeout 2s) fired: no output from opencode for 2s; oc-exec stopped the turn",
    );
  });
});

describe("flags that agree with each other: exit 5 before anything runs", () => {
  it.each([
    [["--turn-timeout", "5m", "x"], "--turn-timeout limits each turn of a conversation and needs --input-format jsonl"],
    [
      ["--turn-max-steps", "3", "--turn-max-tokens", "9", "x"],
      "--turn-max-steps, --turn-max-tokens limit each turn of a conversation and need --input-format jsonl",
    ],
    [
      ["-m", "gpt4", "x"],
      '--model takes provider/model (e.g. anthropic/claude-sonnet-4-5, openai/gpt-4.1), not "gpt4"',
    ],
    [[""], "the prompt is empty: the prompt argument is only white space, and stdin was empty"],
  ])("%j", async (args, message) => {
    const run = await runCliRaw(args, { env, cwd: home, stdin: "" });
    expect(run.code).toBe(5);
    const result = parseLines(run.stdout).at(-1) as ResultEvent;
    expect(result.error?.message).toMatch(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  });

  it("a conversation's bad files entry is named by its input line, not by a flag nobody used", async () => {
    const run = await runCliRaw(["-q", "--input-format", "jsonl", "--opencode", FAKE_OPENCODE], {
      env,
      cwd: home,
      stdin: '{"prompt": "look", "files": ["missing.txt"]}\n',
    });
    const result = parseLines(run.stdout).find((e): e is ResultEvent => e.type === "result")!;
    expect(result.error?.message).toBe(`input line 1: files ${join(home, "missing.txt")} does not exist`);
  });
});

describe("server start on a port that is taken", () => {
  it("exit 5, saying the port is in use, and no server is started", async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = await runCliRaw(["server", "start", "--port", String(port)], {
        env: { ...env, XDG_STATE_HOME: join(home, "state") },
        cwd: home,
      });
      expect(run.code).toBe(5);
      expect(run.stdout).toBe("");
      expect(run.stderr).toBe(
        `oc-exec server start: port ${port} on 127.0.0.1 is in use by another program: choose another --port, or leave it out for a free one\n`,
      );
    } finally {
      taken.close();
    }
  });
});

describe("the scripted model and rehearsals for a user's own pipeline tests", () => {
  it("the library: runTurn({ rehearse }) and OC_EXEC_REHEARSE in its env rehearse, as --rehearse does", async () => {
    const { runTurn } = await import("../../src/index.js");
    const collect = async (turn: AsyncIterable<OcEvent>) => {
      const events: OcEvent[] = [];
      for await (const event of turn) events.push(event);
      return events;
    };
    const denied = await collect(runTurn({ prompt: "x", rehearse: "denied", env }));
    expect(denied[1]).toMatchObject({ type: "warning", code: "rehearsal" });
    expect(denied.at(-1)).toMatchObject({ type: "result", class: "approval_denied", exit_code: 2 });
    const viaEnv = await collect(runTurn({ prompt: "x", env: { ...env, OC_EXEC_REHEARSE: "api-401" } }));
    expect(viaEnv.at(-1)).toMatchObject({ type: "result", class: "api_error", exit_code: 4 });
    const unknown = await collect(runTurn({ prompt: "x", env: { ...env, OC_EXEC_REHEARSE: "flaky" } }));
    expect(unknown.at(-1)).toMatchObject({
      class: "config_error",
      error: { message: expect.stringMatching(/^rehearse takes one of success, /) },
    });
  });

  it("startScriptedModel: a real turn against it, with the configuration it hands out", async () => {
    const { startScriptedModel } = await import("../../src/index.js");
    const model = await startScriptedModel();
    try {
      const run = await runCliRaw(["-q", "-m", model.model, "scenario:tool run it"], {
        env: { ...env, OPENCODE_CONFIG_CONTENT: model.opencodeConfig, OC_EXEC_EXPORT: "0" },
        cwd: home,
      });
      expect(run.code).toBe(0);
      expect((parseLines(run.stdout).at(-1) as ResultEvent).text).toBe("The command printed hi.");
      expect(model.requests().map((r) => r.scenario)).toContain("tool");
    } finally {
      await model.close();
    }
  });

  it("oc-exec scripted-model: one JSON line on stdout, serves until SIGTERM, exit 0", async () => {
    const child = spawn(process.execPath, [BIN, "scripted-model"], {
      env,
      cwd: home,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const first = await new Promise<string>((resolve) => {
      let text = "";
      child.stdout.on("data", (d: Buffer) => {
        text += d.toString();
        if (text.includes("\n")) resolve(text.slice(0, text.indexOf("\n")));
      });
    });
    const info = JSON.parse(first) as { url: string; model: string; opencode_config: { model: string } };
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(info).toMatchObject({ model: "scripted/model", opencode_config: { model: "scripted/model" } });
    const models = await fetch(`${info.url}/models`);
    expect(models.status).toBe(200);
    const code = await new Promise<number | null>((resolve) => {
      child.on("close", resolve);
      child.kill("SIGTERM");
    });
    expect(code).toBe(0);
  });
});

describe("a megabyte of garbage fed to batch and merge", () => {
  it("problems capped, no control character on stderr or in the summary, batch.result small; merge likewise", async () => {
    const garbage = join(home, "random.bin");
    // Deterministic bytes (a simple LCG): every byte value, newlines included, ESC among them.
    let x = 12345;
    const next = () => {
      x = (x * 1103515245 + 12345) >>> 0;
      return (x >>> 16) & 0xff;
    };
    writeFileSync(garbage, Buffer.from(Array.from({ length: 1 << 20 }, next)));
    const summaryFile = join(home, "garbage-summary.md");
    const run = await runCliRaw(["batch", garbage], { env: { ...env, GITHUB_STEP_SUMMARY: summaryFile }, cwd: home });
    expect(run.code).toBe(5);
    const events = parseLines(run.stdout);
    expect(events.map((e) => e.type)).toEqual(["batch.result"]);
    const problems = (events[0] as BatchResult).problems;
    expect(problems).toHaveLength(21);
    expect(problems.at(-1)).toMatch(/^… and \d+ more problem\(s\), not listed$/);
    expect(run.stdout.length).toBeLessThan(20_000);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is that none get through
    const control = /[\u0000-\u0008\u000b-\u001f\u007f]/;
    expect(run.stderr).not.toMatch(control);
    expect(run.stderr.length).toBeLessThan(20_000);
    expect(readFileSync(summaryFile, "utf8")).not.toMatch(control);

    const merged = await runCliRaw(["merge", garbage], {
      env: { ...env, GITHUB_STEP_SUMMARY: summaryFile },
      cwd: home,
    });
    expect(merged.code).toBe(5);
    expect(merged.stderr).not.toMatch(control);
    expect(merged.stderr).toMatch(/^oc-exec merge: /);
    expect(readFileSync(summaryFile, "utf8").length).toBeLessThan(60_000);
    expect(readFileSync(summaryFile, "utf8")).not.toMatch(control);
  });
});

describe("replay says what it was given", () => {
  it("an empty file: exit 5, nothing to replay (no opencode ran); an oc-exec stream: use validate", async () => {
    const empty = join(home, "empty.jsonl");
    writeFileSync(empty, "");
    const none = await runCliRaw(["replay", empty], { env, cwd: home });
    expect(none.code).toBe(5);
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain(`${empty} is empty: there is no opencode output to replay`);
    expect(none.stderr).not.toContain("opencode exited with status 0");
    const ours = join(home, "ours.jsonl");
    const rehearsed = await runCliRaw(["-q", "--rehearse", "success", "x"], { env, cwd: home });
    writeFileSync(ours, rehearsed.stdout);
    const replayed = await runCliRaw(["replay", ours], { env, cwd: home });
    expect(replayed.code).toBe(5);
    expect(replayed.stdout).toBe("");
    expect(replayed.stderr).toContain(
      `${ours} is an oc-exec stream (it starts with run.started, schema_version "1"): check it with oc-exec validate ${ours}`,
    );
  });
});

describe("a rehearsal asked for a whole job", () => {
  it("a conversation step under OC_EXEC_REHEARSE (or --rehearse) is refused, not run against the real provider", async () => {
    for (const [args, extra, named] of [
      [["-q", "--input-format", "jsonl"], { OC_EXEC_REHEARSE: "success" }, "OC_EXEC_REHEARSE"],
      [["-q", "--input-format", "jsonl", "--rehearse", "success"], {}, "--rehearse"],
    ] as const) {
      const run = await runCliRaw([...args], { env: { ...env, ...extra }, cwd: home, stdin: '"hello"\n' });
      expect(run.code).toBe(5);
      const result = parseLines(run.stdout).at(-1) as ResultEvent;
      expect(result.error?.message).toBe(
        `${named} does not apply to a conversation (--input-format jsonl) yet; nothing was run, nothing was sent to a model`,
      );
    }
  });
});
