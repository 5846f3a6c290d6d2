// What a CI author hit in their first hour, each checked the way they met it.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { BatchResult, ResultEvent } from "../../src/contract/schema.js";
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
