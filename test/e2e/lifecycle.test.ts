// Process lifecycle: signals, timeouts, a reader that goes away, hostile streams. Nothing hangs,
// nothing of the turn survives, and the last line is always `result`.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ResultEvent } from "../../src/contract/schema.js";
import { useE2E } from "../support/e2e.js";
import { FAKE_OPENCODE } from "../support/fixtures.js";
import { descendants, isAlive, peakRss, waitFor } from "../support/procs.js";
import { BIN, eventsOf } from "../support/run-cli.js";
import { checkStream } from "../support/schema-check.js";

const e2e = useE2E();
const fake = (mode: string, extra: Record<string, string> = {}) => ({
  OC_EXEC_OPENCODE: FAKE_OPENCODE,
  FAKE_OPENCODE_MODE: mode,
  ...extra,
});

describe("signals", () => {
  it("SIGINT to oc-exec kills the real opencode and the bash tool's `sleep 300`; result interrupted, 130", async () => {
    let sleeper = 0;
    const run = await e2e.run(["-q", "--kill-after", "2s", "scenario:sleep-tool sleep"], {
      onSpawn: (child) => {
        void waitFor(
          () => descendants(child.pid!).find((p) => p.cmdline === "sleep 300"),
          60_000,
          "the bash tool's sleep 300",
        ).then((p) => {
          sleeper = p.pid;
          child.kill("SIGINT");
        });
      },
    });
    expect(sleeper).toBeGreaterThan(0);
    expect(run.code).toBe(130);
    expect(run.result).toMatchObject({
      class: "interrupted",
      exit_code: 130,
      error: { name: "Interrupted", message: "oc-exec received SIGINT and stopped the turn" },
    });
    expect(isAlive(sleeper)).toBe(false);
  });

  it.each([
    ["SIGTERM", 143, "terminated"],
    ["SIGHUP", 143, "terminated"],
    ["SIGINT", 130, "interrupted"],
  ] as const)("%s: the whole process group is gone, result %s", async (signal, code, cls) => {
    const pidfile = join(e2e.home.root, `pids-${signal}`);
    const run = await e2e.run(["-q", "--kill-after", "1s", "x"], {
      extraEnv: fake("hang", { FAKE_CHILD_PIDFILE: pidfile }),
      onStdout: (text, child) => {
        if (text.includes('"step.started"'))
          void waitFor(() => readFileSafe(pidfile), 10_000, "pidfile").then(() => child.kill(signal));
      },
    });
    expect(run.code).toBe(code);
    expect(run.result.class).toBe(cls);
    const [opencodePid, childPid] = readFileSync(pidfile, "utf8").trim().split(" ").map(Number);
    expect(isAlive(opencodePid!)).toBe(false);
    expect(isAlive(childPid!)).toBe(false);
  });

  it("an opencode that ignores SIGTERM is killed after --kill-after; a second Ctrl-C kills at once", async () => {
    const run = await e2e.run(["-q", "--kill-after", "60s", "x"], {
      extraEnv: fake("hang", { FAKE_IGNORE_TERM: "1" }),
      onStdout: (text, child) => {
        if (text.includes('"step.started"')) {
          child.kill("SIGINT");
          setTimeout(() => child.kill("SIGINT"), 300);
        }
      },
    });
    expect(run.code).toBe(130);
    expect(run.result.opencode.signal).toBe("SIGKILL");
  });
});

function readFileSafe(path: string): string | null {
  try {
    return readFileSync(path, "utf8") || null;
  } catch {
    return null;
  }
}

describe("timeouts", () => {
  it("--timeout bounds the whole turn, with the real opencode waiting on a slow model: timeout, 124", async () => {
    const run = await e2e.run(["-q", "--timeout", "4s", "--kill-after", "1s", "scenario:slow wait"]);
    expect(run.code).toBe(124);
    expect(run.result.error).toEqual({
      name: "TimeoutError",
      message: "the turn timeout (--timeout 4s) fired; oc-exec stopped the turn",
      status_code: null,
      retryable: null,
      timeout: { kind: "turn", ms: 4000 },
    });
  });

  it("--startup-timeout: no JSON event in time", async () => {
    const run = await e2e.run(["-q", "--startup-timeout", "1500ms", "x"], { extraEnv: fake("mute") });
    expect(run.code).toBe(124);
    expect(run.result.error).toMatchObject({ timeout: { kind: "startup", ms: 1500 } });
    expect(run.result.error!.message).toBe(
      "the start-up timeout (--startup-timeout 1500ms) fired: no JSON event from opencode within 1500ms; oc-exec stopped the turn",
    );
  });

  it("plain-text lines before the first JSON event count as signs of life", async () => {
    const run = await e2e.run(["-q", "--startup-timeout", "2s", "--timeout", "5s", "x"], {
      extraEnv: fake("mute", { FAKE_SIGN_OF_LIFE_MS: "100" }),
    });
    expect(run.code).toBe(124);
    expect(run.result.error).toMatchObject({ timeout: { kind: "turn", ms: 5000 } });
    expect(eventsOf(run, "warning").length).toBeGreaterThan(5);
  });

  it("--idle-timeout does not count opencode's own start: a silent start longer than --idle-timeout, then a turn, exit 0", async () => {
    // opencode is silent for its first second or more while it starts (much longer on a loaded
    // machine); that is --startup-timeout's to judge. Counted as idle, 2 of 3 plain turns with
    // --idle-timeout 1s failed at 1.04 s. Here the start is 3 s of silence, then a quick turn.
    const run = await e2e.run(["-q", "--idle-timeout", "1s", "x"], {
      extraEnv: fake("steps", { FAKE_START_MS: "3000", FAKE_STEPS: "2", FAKE_DELAY_MS: "10" }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ class: "success", steps: 2 });
  });

  it("--idle-timeout: a gap with no output at all", async () => {
    const run = await e2e.run(["-q", "--idle-timeout", "1s", "x"], { extraEnv: fake("hang") });
    expect(run.code).toBe(124);
    expect(run.result.error).toMatchObject({ timeout: { kind: "idle", ms: 1000 } });
    expect(run.types).toEqual(["run.started", "session.started", "step.started", "result"]);
  });
});

describe("the reader goes away", () => {
  it("oc-exec ... | head -1: stops the turn, exits quietly with no stack trace", async () => {
    const out = await new Promise<{ head: string; status: string; stderr: string }>((resolve) => {
      const child = spawn(
        "bash",
        ["-c", `"${process.execPath}" "${BIN}" -q x | head -1; echo "status=\${PIPESTATUS[0]}" >&2`],
        {
          env: { ...e2e.home.env, ...fake("steps", { FAKE_STEPS: "200", FAKE_DELAY_MS: "20" }) },
        },
      );
      let head = "";
      let stderr = "";
      child.stdout.on("data", (d) => (head += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", () =>
        resolve({ head, status: /status=(\d+)/.exec(stderr)?.[1] ?? "?", stderr: stderr.replace(/status=\d+\n/, "") }),
      );
    });
    expect(JSON.parse(out.head).type).toBe("run.started");
    expect(out.status).toBe("141");
    expect(out.stderr).toBe("");
  });

  it("oc-exec ... 2>&1 >file | head -1: progress has nowhere to go, the turn still ends with its result and exit status", async () => {
    const file = join(e2e.home.root, "stderr-gone.jsonl");
    const status = await new Promise<string>((resolve) => {
      const child = spawn(
        "bash",
        [
          "-c",
          `"${process.execPath}" "${BIN}" x 2>&1 >"${file}" | head -1 >/dev/null; echo "status=\${PIPESTATUS[0]}"`,
        ],
        {
          env: { ...e2e.home.env, ...fake("steps", { FAKE_STEPS: "50", FAKE_DELAY_MS: "20" }) },
        },
      );
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.on("close", () => resolve(/status=(\d+)/.exec(out)?.[1] ?? "?"));
    });
    expect(status).toBe("0");
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; class?: string; steps?: number });
    expect(lines.at(-1)).toMatchObject({ type: "result", class: "success", steps: 50 });
  });
});

describe("hostile output on opencode's stdout", () => {
  it("huge lines, invalid UTF-8, CRLF, blank lines, non-objects, malformed and unknown events, text between lines", async () => {
    let peak = 0;
    const run = await e2e.run(["-q", "x"], {
      extraEnv: fake("hostile", { FAKE_HUGE_BYTES: String(200 * 1024 * 1024) }),
      onSpawn: (child) => {
        const timer = setInterval(() => (peak = Math.max(peak, peakRss(child.pid!) ?? 0)), 20);
        child.on("exit", () => clearInterval(timer));
      },
    });
    expect(run.code).toBe(2);
    expect(run.types).toEqual([
      "run.started",
      "session.started",
      "step.started",
      "warning", // migration text, CRLF
      "warning", // "just a string"
      "warning", // 42
      "warning", // [1,2]
      "warning", // null
      "warning", // text event without part.text
      "warning", // tool_use without a tool name
      "warning", // unknown event type
      "message", // invalid UTF-8 text, replaced
      "warning", // the 200 MB line
      "message", // the line after it arrives
      "step.finished",
      "message", // last line without a newline
      "permission.denied", // the notice on stdout, with no tool to pair
      "result",
    ]);
    const warnings = eventsOf(run, "warning");
    expect(warnings.map((w) => w.code)).toEqual([
      "non_json_line",
      "non_object_json",
      "non_object_json",
      "non_object_json",
      "non_object_json",
      "malformed_event",
      "malformed_event",
      "unknown_event",
      "line_too_long",
    ]);
    expect(warnings[8]!.message).toMatch(
      /^opencode printed a line of 209715234 bytes on stdout, over the 16777216-byte limit; it was skipped/,
    );
    expect(eventsOf(run, "message").map((m) => m.text)).toEqual(["\ufffd\ufffd", "after the huge line", "last words"]);
    expect(run.result.permission_denials).toEqual([
      { permission: "bash", pattern: "rm -rf /", tool: null, call_id: null },
    ]);
    expect(run.result.stream).toEqual({ json_lines: 8, other_lines: 7, blank_lines: 3, warnings: 9 });
    expect(run.result.text).toBe("last words");
    // Memory stays bounded: a 200 MB line costs at most the 16 MiB line limit, not 200 MB.
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(160 * 1024 * 1024);
  });
});

describe("a reader slower than opencode", () => {
  it("holds opencode back instead of buffering: nothing lost, and no idle timeout while held", async () => {
    const progress = join(e2e.home.root, "flood-progress");
    const child = spawn(process.execPath, [BIN, "-q", "--idle-timeout", "1s", "x"], {
      env: { ...e2e.home.env, ...fake("flood", { FAKE_FLOOD_MB: "40", FAKE_PROGRESS: progress }) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    // The reader takes nothing for three seconds, three times the idle timeout.
    await new Promise((r) => setTimeout(r, 3000));
    const writtenWhileHeld = existsSync(progress) ? Number.parseInt(readFileSync(progress, "utf8"), 10) : 0;
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d: string) => (stdout += d));
    const code = await closed;

    // Pipes and a 64-event queue, not 40 MB: opencode waited for the reader.
    expect(writtenWhileHeld).toBeLessThan(4 * 1024 * 1024);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const [, lines, done] = readFileSync(progress, "utf8").split(" ");
    expect(done).toBe("done");
    const events = checkStream(stdout);
    expect(events.map((e) => e.type)).toEqual([
      "run.started",
      "session.started",
      "step.started",
      ...Array(Number(lines)).fill("message"),
      "step.finished",
      "result",
    ]);
    expect((events.at(-1) as ResultEvent).class).toBe("success");
  });
});

describe("huge tool output", () => {
  it("a 20 MB tool line (10 MB of output, repeated in metadata) becomes a tool event with capped output", async () => {
    let peak = 0;
    const run = await e2e.run(["-q", "--include-raw", "x"], {
      extraEnv: fake("big-tool", { FAKE_OUTPUT_MB: "10" }),
      onSpawn: (child) => {
        const timer = setInterval(() => (peak = Math.max(peak, peakRss(child.pid!) ?? 0)), 20);
        child.on("exit", () => clearInterval(timer));
      },
    });
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
      call_id: "call_big",
      tool: "bash",
      status: "completed",
      output: "o".repeat(64 * 1024),
      output_truncated: true,
      title: "cat big.log",
      duration_ms: 500,
    });
    // The line oc-exec parsed was shortened, so it is not passed off as opencode's raw line.
    expect(tool).not.toHaveProperty("raw");
    expect(eventsOf(run, "message")[0]).toHaveProperty("raw");
    expect(run.result.stream).toEqual({ json_lines: 6, other_lines: 0, blank_lines: 0, warnings: 0 });
    // Before the cutter, this line was held whole (and then dropped as over the 16 MiB limit).
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(120 * 1024 * 1024);
  });
});

describe("opencode's temporary files", () => {
  // opencode's runtime writes a 5.5 MB native library into TMPDIR at every start and never removes
  // it: without a TMPDIR of its own, every turn left one (or two, with `opencode export`) behind.
  const extracted = (dir: string) => readdirSync(dir).filter((name) => name.endsWith(".so"));

  it("a turn gives opencode and its tools a TMPDIR of their own, and removes it with what opencode left there", async () => {
    const tmp = mkdtempSync(join(e2e.home.root, "tmp-"));
    const dir = e2e.workspace();
    const run = await e2e.run(["--auto", "scenario:env-probe turn-tmp"], { cwd: dir, extraEnv: { TMPDIR: tmp } });
    expect(run.code).toBe(0);
    const inside = /^TMPDIR=(.*)$/m.exec(readFileSync(join(dir, "probe-env.txt"), "utf8"))?.[1];
    expect(inside).toMatch(new RegExp(`^${tmp}/oc-exec-opencode-\\d+-\\w+$`));
    expect(existsSync(inside!)).toBe(false);
    expect(readdirSync(tmp)).toEqual([]);
  }, 90_000);

  it("doctor's opencode commands (models, auth list) leave nothing in TMPDIR either", async () => {
    const tmp = mkdtempSync(join(e2e.home.root, "tmp-"));
    const doctor = await e2e.runRaw(["doctor"], { extraEnv: { TMPDIR: tmp } });
    expect(doctor.stderr).toMatch(/models from/);
    expect(readdirSync(tmp)).toEqual([]);
  }, 90_000);

  it("a server started without a sandbox has one for its life, removed when it stops", async () => {
    const tmp = mkdtempSync(join(e2e.home.root, "tmp-"));
    const started = await e2e.runRaw(["server", "start", "--idle-timeout", "15m"], { extraEnv: { TMPDIR: tmp } });
    expect(started.code).toBe(0);
    const url = started.stdout.trim();
    try {
      const run = await e2e.run(["--attach", url, "scenario:plain server-tmp"]);
      expect(run.code).toBe(0);
      const [own] = readdirSync(tmp);
      expect(own).toMatch(/^oc-exec-opencode-\d+-\w+$/);
      expect(extracted(join(tmp, own!)).length).toBeGreaterThan(0);
      expect(extracted(tmp)).toEqual([]);
    } finally {
      expect((await e2e.runRaw(["server", "stop", url])).code).toBe(0);
    }
    expect(readdirSync(tmp)).toEqual([]);
  }, 90_000);
});

describe("an opencode that hangs before the turn (in --version, its child holding the pipes)", () => {
  /** A binary that marks it started, then waits on a child that keeps its stdout open. */
  function hangingBinary() {
    const dir = mkdtempSync(join(e2e.home.root, "hung-"));
    const mark = join(dir, "asked");
    const bin = join(dir, "opencode");
    writeFileSync(bin, `#!/bin/sh\ntouch ${mark}\nsleep 1777\n`, { mode: 0o755 });
    return { bin, mark };
  }
  const leftovers = () =>
    readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8") === "sleep\x001777\x00";
        } catch {
          return false;
        }
      });

  it("--timeout ends it: run.started and result (timeout, 124), nothing left", async () => {
    const { bin } = hangingBinary();
    const run = await e2e.run(["-q", "--opencode", bin, "--timeout", "3s", "hi"]);
    expect(run.code).toBe(124);
    expect(run.types).toEqual(["run.started", "result"]);
    expect(run.result.error).toMatchObject({ name: "TimeoutError", timeout: { kind: "turn", ms: 3000 } });
    await waitFor(() => leftovers().length === 0, 10_000, "the hung binary's child to end");
  });

  it("SIGTERM while it is asked for its version: exit 143 at once, with run.started and result", async () => {
    const { bin, mark } = hangingBinary();
    const run = await e2e.runRaw(["-q", "--opencode", bin, "hi"], {
      onSpawn: (child) => {
        void waitFor(() => existsSync(mark), 30_000, "the binary to be asked").then(() => child.kill("SIGTERM"));
      },
    });
    expect(run.code).toBe(143);
    const events = checkStream(run.stdout);
    expect(events.map((e) => e.type)).toEqual(["run.started", "result"]);
    expect(events.at(-1)).toMatchObject({ class: "terminated" });
    await waitFor(() => leftovers().length === 0, 10_000, "the hung binary's child to end");
  });

  it("oc-exec --version gives up on it and says so", async () => {
    const { bin } = hangingBinary();
    const run = await e2e.runRaw(["--opencode", bin, "--version"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`opencode unknown version (${bin}, untested;`);
    await waitFor(() => leftovers().length === 0, 10_000, "the hung binary's child to end");
  });
});
