#!/usr/bin/env node
import { spawn } from "node:child_process";
// A fake `opencode` for what the real binary cannot produce on demand: recorded fixtures of slow
// or old cases replayed, crashes, hangs, garbage, huge lines. Driven by environment variables:
//   FAKE_OPENCODE_FIXTURE  a fixture directory (stdout.txt, stderr.txt, meta.json) to replay
//   FAKE_OPENCODE_MODE     a hostile behaviour (see MODES below)
//   FAKE_OPENCODE_VERSION  what --version prints (default: the fixture's version, else 1.18.33)
//   FAKE_OPENCODE_RECORD   a file to write {argv, stdin, env} to, for assertions
//   FAKE_TERM_EXIT         on SIGTERM, exit with this status instead of dying by the signal
//   FAKE_START_MS          stay silent this long before anything else, as a slow start does
//   FAKE_TERM_FLUSH        with FAKE_TERM_EXIT: first write a last text event and wait until it
//                          is out, as a graceful shutdown would (blocks while nobody reads)
//   FAKE_OPENCODE_SHARED   with a 2.x version: a file where a `run` without --standalone leaves
//                          its turn, as 2.x hands such a turn to its shared background service
//                          (packages/cli/src/services/server-connection.ts in opencode's source)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const env = process.env;
const fixture = env.FAKE_OPENCODE_FIXTURE;
const meta =
  fixture && existsSync(join(fixture, "meta.json"))
    ? JSON.parse(readFileSync(join(fixture, "meta.json"), "utf8"))
    : null;

if (process.argv.includes("--version")) {
  process.stdout.write(`${env.FAKE_OPENCODE_VERSION ?? meta?.opencode_version ?? "1.18.33"}\n`);
  process.exit(0);
}

if (process.argv[2] === "serve") {
  // `opencode serve` as 1.0.185 answers it (observed with the real binary): no /global/health;
  // unknown routes go to its web app, which it cannot reach offline, so they answer 500; /doc is
  // its OpenAPI document, titled "opencode".
  const { createServer } = await import("node:http");
  const server = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    if (req.url === "/doc") {
      res.end(JSON.stringify({ openapi: "3.1.1", info: { title: "opencode", version: "0.0.3" }, paths: {} }));
      return;
    }
    res.statusCode = 500;
    res.end(
      JSON.stringify({
        name: "UnknownError",
        data: { message: "Error: Unable to connect. Is the computer able to access the url?" },
      }),
    );
  });
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`opencode server listening on http://127.0.0.1:${server.address().port}\n`);
  });
  process.on("SIGTERM", () => process.exit(0));
  await new Promise(() => {});
}

if (process.argv.includes("--help")) {
  // The flags of 1.18.33's `opencode run --help`, for feature detection of untested versions.
  const flags = [
    "--print-logs",
    "--log-level",
    "--pure",
    "--command",
    "--continue",
    "--session",
    "--fork",
    "--share",
    "--model",
    "--agent",
    "--format",
    "--file",
    "--title",
    "--attach",
    "--dir",
    "--port",
    "--variant",
    "--thinking",
    "--auto",
  ];
  // 2.x's `run` has no --dir, --variant, --pure or --print-logs (packages/cli/src/run/run.ts).
  const v2 = (env.FAKE_OPENCODE_VERSION ?? "").startsWith("2.");
  const shown = v2
    ? [
        ...flags.filter((f) => !["--dir", "--variant", "--pure", "--print-logs", "--log-level"].includes(f)),
        // 2.x's private server for the turn; FAKE_OPENCODE_NO_STANDALONE plays a 2.x without it.
        ...(env.FAKE_OPENCODE_NO_STANDALONE ? [] : ["--standalone"]),
      ]
    : flags;
  process.stdout.write(
    `opencode run [message..]\n\nOptions:\n${shown.map((f) => `      ${f}  description`).join("\n")}\n`,
  );
  process.exit(0);
}

// `opencode export` and `opencode session delete`: this fake has no sessions.
if (process.argv[2] === "export" || process.argv[2] === "session") {
  process.stderr.write("Error: Session not found\n");
  process.exit(1);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const write = (stream, text) => new Promise((r) => (stream.write(text) ? r() : stream.once("drain", r)));
const sid = "ses_fake0000000000000000000001";
const ev = (type, rest) => `${JSON.stringify({ type, timestamp: Date.now(), sessionID: sid, ...rest })}\n`;
const stepStart = () =>
  ev("step_start", { part: { id: "prt_1", messageID: "msg_1", sessionID: sid, type: "step-start" } });
const text = (t) => ev("text", { part: { id: "prt_2", messageID: "msg_1", sessionID: sid, type: "text", text: t } });
const toolUse = (callID, state) =>
  ev("tool_use", {
    part: { id: "prt_t", messageID: "msg_1", sessionID: sid, type: "tool", tool: "bash", callID, state },
  });
const stepFinish = (reason = "stop") =>
  ev("step_finish", {
    part: {
      id: "prt_3",
      messageID: "msg_1",
      sessionID: sid,
      type: "step-finish",
      reason,
      tokens: { total: 15, input: 10, output: 5, reasoning: 0, cache: { read: 0, write: 0 } },
      cost: 0.001,
    },
  });

async function readStdin() {
  const parts = [];
  for await (const c of process.stdin) parts.push(c);
  return Buffer.concat(parts).toString("utf8");
}

if (env.FAKE_TERM_EXIT) {
  const exit = () => process.exit(Number(env.FAKE_TERM_EXIT));
  process.on("SIGTERM", () => (env.FAKE_TERM_FLUSH ? process.stdout.write(text("stopping"), exit) : exit()));
}

const MODES = {
  // Replays a recorded fixture.
  async replay() {
    const stderr = readFileSync(join(fixture, "stderr.txt"));
    const stdout = readFileSync(join(fixture, "stdout.txt"));
    if (stderr.length) await write(process.stderr, stderr);
    if (stdout.length) await write(process.stdout, stdout);
    if (meta.signal) process.kill(process.pid, meta.signal);
    process.exitCode = meta.exit_code ?? 0;
  },
  // A normal turn, for tests of the wrapper's own plumbing.
  async ok() {
    await write(process.stdout, stepStart() + text("fake reply") + stepFinish());
  },
  // Dies by a signal with no error line.
  async crash() {
    await write(process.stdout, stepStart());
    await write(process.stderr, "panic: something broke inside opencode\n");
    process.kill(process.pid, "SIGSEGV");
  },
  // Exits 1 before any JSON.
  async "exit-early"() {
    await write(process.stderr, "fatal: could not open database\n");
    process.exitCode = 1;
  },
  // Exits 0 and prints nothing (seen with --attach on 1.18.33).
  async silent() {},
  // Reports a tool as running before it finishes, as releases that stream part updates do.
  async "running-tool"() {
    const tool = (status, extra = {}) => toolUse("call_1", { status, input: { command: "sleep 2" }, ...extra });
    await write(process.stdout, stepStart() + tool("running"));
    await sleep(Number(env.FAKE_TOOL_MS ?? 2000));
    await write(process.stdout, tool("completed", { output: "", title: "sleep 2", time: { start: 1, end: 2001 } }));
    await write(process.stdout, text("done") + stepFinish());
  },
  // Only garbage.
  async garbage() {
    await write(process.stdout, "Segmentation fault?\n<html>nope</html>\n[1,2,3]\n\x00\x01binary\n");
    process.exitCode = 0;
  },
  // Every kind of hostile line between real events.
  async hostile() {
    const huge = Number(env.FAKE_HUGE_BYTES ?? 20 * 1024 * 1024);
    await write(process.stdout, stepStart());
    await write(process.stdout, "Performing one time database migration, may take a few minutes...\r\n");
    await write(process.stdout, "\n\n");
    await write(process.stdout, '"just a string"\n42\n[1,2]\nnull\n');
    await write(process.stdout, ev("text", {}));
    await write(process.stdout, ev("tool_use", { part: { tool: 5 } }));
    await write(process.stdout, ev("brand_new_event", { part: {} }));
    await write(
      process.stdout,
      Buffer.from([
        0x7b, 0x22, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x2c, 0x22, 0x70, 0x61,
        0x72, 0x74, 0x22, 0x3a, 0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x7d,
        0x0a,
      ]),
    );
    // A line far over the limit, written in pieces.
    const piece = Buffer.alloc(1024 * 1024, 0x61);
    await write(process.stdout, '{"type":"text","part":{"text":"');
    for (let n = 0; n < huge; n += piece.length) await write(process.stdout, piece);
    await write(process.stdout, '"}}\n');
    await write(process.stdout, `${text("after the huge line")}\r\n`);
    await write(process.stdout, "! permission requested: bash (rm -rf /); auto-rejecting\n");
    await write(process.stdout, stepFinish());
    // The last line has no newline.
    await write(
      process.stdout,
      ev("text", { part: { id: "p9", messageID: "msg_2", type: "text", text: "last words" } }).trimEnd(),
    );
  },
  // Prints one event, then hangs with its tool child running.
  async hang() {
    // Before the first event: a test that signals on seeing it must find SIGTERM already ignored.
    if (env.FAKE_IGNORE_TERM) process.on("SIGTERM", () => {});
    await write(process.stdout, stepStart());
    if (env.FAKE_CHILD_PIDFILE) {
      const child = spawn("sleep", ["300"], { stdio: "ignore" });
      writeFileSync(env.FAKE_CHILD_PIDFILE, `${process.pid} ${child.pid}\n`);
    }
    await sleep(600_000);
  },
  // Says nothing at all for a long time (start-up timeout), optionally with plain-text signs of life.
  async mute() {
    const every = Number(env.FAKE_SIGN_OF_LIFE_MS ?? 0);
    for (let i = 0; i < 600; i++) {
      if (every) {
        await write(process.stdout, "still migrating...\n");
        await sleep(every);
      } else await sleep(1000);
    }
  },
  // Streams N steps, each with reported cost and tokens, with a delay between lines.
  async steps() {
    const n = Number(env.FAKE_STEPS ?? 10);
    const delay = Number(env.FAKE_DELAY_MS ?? 50);
    for (let i = 0; i < n; i++) {
      await write(process.stdout, stepStart());
      // Every step but the last asks for tools; the last one answers, as a finished turn does.
      if (i === n - 1) await write(process.stdout, text("done") + stepFinish("stop"));
      else await write(process.stdout, stepFinish("tool-calls"));
      await sleep(delay);
    }
  },
  // Streams a recorded-shape corpus file as fast as the reader takes it (throughput benchmark).
  async corpus() {
    const { createReadStream } = await import("node:fs");
    await new Promise((resolve, reject) =>
      createReadStream(env.FAKE_CORPUS).on("error", reject).on("end", resolve).pipe(process.stdout, { end: false }),
    );
  },
  // FAKE_FLOOD_MB of 8 KB text events as fast as the reader takes them; after each megabyte the
  // bytes written so far go to FAKE_PROGRESS (to see whether a slow reader holds it back), and
  // at the end "<bytes> <lines> done".
  async flood() {
    const megabytes = Number(env.FAKE_FLOOD_MB ?? 20);
    const filler = "f".repeat(8 * 1024);
    await write(process.stdout, stepStart());
    let bytes = 0;
    let lines = 0;
    let reported = 0;
    while (bytes < megabytes * 1024 * 1024) {
      const line = text(filler);
      bytes += line.length;
      lines++;
      await write(process.stdout, line);
      if (env.FAKE_PROGRESS && bytes - reported >= 1024 * 1024) {
        reported = bytes;
        writeFileSync(env.FAKE_PROGRESS, String(bytes));
      }
    }
    await write(process.stdout, stepFinish());
    if (env.FAKE_PROGRESS) writeFileSync(env.FAKE_PROGRESS, `${bytes} ${lines} done`);
  },
  // One finished bash call whose output (FAKE_OUTPUT_MB of it) opencode repeats in
  // state.metadata.output, as real releases do: a line twice the output's size.
  async "big-tool"() {
    const output = "o".repeat(Number(env.FAKE_OUTPUT_MB ?? 10) * 1024 * 1024);
    await write(process.stdout, stepStart());
    const state = {
      status: "completed",
      input: { command: "cat big.log" },
      output,
      title: "cat big.log",
      metadata: { output, exit: 0, truncated: false },
      time: { start: 1000, end: 1500 },
    };
    await write(process.stdout, toolUse("call_big", state));
    await write(process.stdout, stepFinish("tool-calls"));
    await write(process.stdout, stepStart());
    await write(process.stdout, text("The log is long."));
    await write(process.stdout, stepFinish());
  },
  // Writes FAKE_LINES text events at FAKE_RATE lines/s, each stamped with the time it was
  // written (latency benchmark).
  async paced() {
    const n = Number(env.FAKE_LINES ?? 1000);
    const interval = 1000 / Number(env.FAKE_RATE ?? 1000);
    const start = performance.now();
    await write(process.stdout, stepStart());
    // Sleeps between lines rather than spinning: on a 2-core machine a spinning producer takes a
    // core from oc-exec and the reader, and the benchmark would measure that contention.
    for (let i = 0; i < n; ) {
      while (i < n && start + i * interval <= performance.now()) {
        process.stdout.write(text(`t=${performance.timeOrigin + performance.now()}`));
        i++;
      }
      if (i < n) await sleep(Math.max(0, start + i * interval - performance.now()));
    }
    await write(process.stdout, stepFinish());
  },
  // One opencode error line (FAKE_ERROR_NAME, FAKE_ERROR_DATA as JSON), then exit 1.
  async "error-line"() {
    await write(process.stdout, stepStart());
    await write(
      process.stdout,
      ev("error", { error: { name: env.FAKE_ERROR_NAME, data: JSON.parse(env.FAKE_ERROR_DATA ?? "{}") } }),
    );
    process.exitCode = Number(env.FAKE_EXIT ?? 1);
  },
  // The 2.x error shape.
  async "v2-error"() {
    await write(
      process.stdout,
      `${JSON.stringify({
        type: "error",
        timestamp: Date.now(),
        sessionID: sid,
        error: { type: "ContextOverflowError", message: "prompt is too long" },
      })}\n`,
    );
    process.exitCode = 1;
  },
};

const mode = env.FAKE_OPENCODE_MODE ?? (fixture ? "replay" : "ok");
const stdin = await readStdin();
if (env.FAKE_OPENCODE_RECORD) {
  writeFileSync(
    env.FAKE_OPENCODE_RECORD,
    JSON.stringify({
      argv: process.argv.slice(2),
      stdin,
      env: Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith("OPENCODE_") || k === "PWD")),
    }),
  );
}
if (env.FAKE_START_MS) await sleep(Number(env.FAKE_START_MS));
const v2run = (env.FAKE_OPENCODE_VERSION ?? "").startsWith("2.") && process.argv[2] === "run";
if (v2run && env.FAKE_OPENCODE_SHARED && !process.argv.includes("--standalone"))
  writeFileSync(env.FAKE_OPENCODE_SHARED, `a turn on the shared service: ${process.argv.slice(2).join(" ")}\n`, {
    flag: "a",
  });
await MODES[mode]();
