// What only the server backend does: permissions answered live, text deltas, questions, stopping
// a turn without stopping the server, and every way of failing to reach or keep a server. Servers
// are real `opencode serve` processes in this file's throwaway HOME, stopped by their pids.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundledBinary } from "../../src/domain/opencode/locate.js";
import { useE2E } from "../support/e2e.js";
import { FAKE_OPENCODE } from "../support/fixtures.js";
import { descendants, isAlive, waitFor } from "../support/procs.js";
import { eventsOf } from "../support/run-cli.js";
import { killServer, readRecords, useWarmServer } from "../support/warm-server.js";

const e2e = useE2E();
const server = useWarmServer(e2e);
// The binary oc-exec itself runs: the platform package's, whether or not opencode-ai's postinstall ran.
const OPENCODE = bundledBinary()!.path;

/** A bare `opencode serve` (not managed by oc-exec), for the tests that need to break one. */
async function bareServer(env: Record<string, string> = {}): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(OPENCODE, ["serve", "--hostname", "127.0.0.1", "--port", "0"], {
    env: { ...e2e.opencodeEnv(), ...env },
    cwd: e2e.home.workspace,
    stdio: ["ignore", "pipe", "ignore"],
    detached: true,
  });
  let seen = "";
  child.stdout!.on("data", (d: Buffer) => (seen += d.toString()));
  const url = await waitFor(() => /listening on (http:\/\/\S+)/.exec(seen)?.[1], 60_000, "opencode serve to listen");
  return { url, child };
}

const attach = () => ["-q", "--attach", server.url];

describe("permissions answered live", () => {
  it("--allow with a pattern: the matching command runs, nothing is asked", async () => {
    const run = await e2e.run([...attach(), "--allow", "bash:echo *", "scenario:tool run echo"]);
    expect(run.code).toBe(0);
    expect(eventsOf(run, "tool")[0]).toMatchObject({ tool: "bash", status: "completed", output: "hi\n" });
  });

  it("--auto approves what the rules leave to ask; without it the request is rejected with every pattern asked", async () => {
    const env = { OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) };
    const approved = await e2e.run([...attach(), "--auto", "scenario:tool run echo"], { extraEnv: env });
    expect(approved.code).toBe(0);
    expect(approved.result.permission_denials).toEqual([]);
    const rejected = await e2e.run([...attach(), "scenario:tool run echo"], { extraEnv: env });
    expect(rejected.code).toBe(2);
    expect(eventsOf(rejected, "permission.denied")).toEqual([
      expect.objectContaining({
        permission: "bash",
        pattern: "echo hi",
        patterns: ["echo hi"],
        tool: "bash",
        call_id: "call_1_0",
      }),
    ]);
  });

  it("--deny removes the tool: the policy's refusal, exit 2", async () => {
    const run = await e2e.run([...attach(), "--deny", "bash", "scenario:tool run echo"]);
    expect(run.code).toBe(2);
    expect(run.result.error?.message).toMatch(/^the permission policy refused permission bash/);
  });

  it("the question tool is not offered; a question the caller allowed is rejected live: approval_denied, QuestionRejected", async () => {
    const denied = await e2e.run([...attach(), "scenario:question pick"]);
    expect(denied.code).toBe(2);
    expect(eventsOf(denied, "tool")[0]).toMatchObject({ tool: "question", status: "denied" });
    const asked = await e2e.run([...attach(), "--allow", "question,read", "scenario:question pick"]);
    expect(asked.code).toBe(2);
    expect(asked.result.error).toMatchObject({
      name: "QuestionRejected",
      message: expect.stringContaining('the agent asked "Which color should the button be?"'),
    });
    expect(eventsOf(asked, "warning").map((w) => w.code)).toEqual(["question_rejected"]);
  });
});

describe("text as it is written", () => {
  it("--text-deltas: message.delta events that add up to the message; the default stream has none", async () => {
    const run = await e2e.run([...attach(), "--text-deltas", "scenario:plain hi"]);
    expect(run.code).toBe(0);
    const deltas = eventsOf(run, "message.delta");
    expect(deltas.map((d) => d.text)).toEqual(["Hello from the ", "scripted model."]);
    expect(new Set(deltas.map((d) => d.part_id)).size).toBe(1);
    expect(run.types).toEqual([
      "run.started",
      "session.started",
      "step.started",
      "message.delta",
      "message.delta",
      "message",
      "step.finished",
      "result",
    ]);
    const plain = await e2e.run([...attach(), "scenario:plain hi"]);
    expect(plain.types).not.toContain("message.delta");
  });

  it("--text-deltas without --attach is a usage error naming both flags", async () => {
    const run = await e2e.run(["-q", "--text-deltas", "hi"]);
    expect(run.code).toBe(5);
    expect(run.result.error?.message).toBe(
      "--text-deltas needs --attach: `opencode run` prints each text part only when it is complete",
    );
  });
});

describe("stopping a turn stops only the turn", () => {
  it.each([
    ["SIGINT", 130, "interrupted"],
    ["SIGTERM", 143, "terminated"],
  ] as const)(
    "%s mid-tool: the session is aborted, the tool's sleep 300 ends, the server serves the next turn",
    async (signal, code, cls) => {
      let sleeper = 0;
      const run = await e2e.run([...attach(), "--auto", "scenario:sleep-tool sleep"], {
        onSpawn: (child) => {
          void waitFor(
            () => descendants(server.record.pid).find((p) => p.cmdline === "sleep 300"),
            30_000,
            "the bash tool's sleep 300 under the server",
          ).then((p) => {
            sleeper = p.pid;
            child.kill(signal);
          });
        },
      });
      expect(sleeper).toBeGreaterThan(0);
      expect(run.code).toBe(code);
      expect(run.result.class).toBe(cls);
      await waitFor(() => !isAlive(sleeper), 10_000, "the sleep to end");
      expect(isAlive(server.record.pid)).toBe(true);
      const next = await e2e.run([...attach(), "scenario:plain next"]);
      expect(next.code).toBe(0);
    },
  );

  it("--timeout aborts the session through the API; the server stays up", async () => {
    const run = await e2e.run([...attach(), "--timeout", "1500ms", "--auto", "scenario:sleep-tool sleep"]);
    expect(run.code).toBe(124);
    expect(eventsOf(run, "tool")).toEqual([]);
    const next = await e2e.run([...attach(), "scenario:plain after the timeout"]);
    expect(next.code).toBe(0);
    expect(descendants(server.record.pid).filter((p) => p.cmdline === "sleep 300")).toEqual([]);
  });
});

describe("failures have their class", () => {
  it("unreachable, not opencode, a bad URL: exit 5 naming the URL", async () => {
    const refused = await e2e.run(["-q", "--attach", "http://127.0.0.1:9", "hi"]);
    expect(refused.code).toBe(5);
    expect(refused.result.error).toMatchObject({ name: "ServerUnreachable" });
    expect(refused.result.error?.message).toMatch(/^cannot reach the opencode server at http:\/\/127\.0\.0\.1:9 \(/);
    const notOpencode = await e2e.run(["-q", "--attach", e2e.server.url.replace(/\/v1$/, ""), "hi"]);
    expect(notOpencode.code).toBe(5);
    expect(notOpencode.result.error?.name).toBe("NotAnOpencodeServer");
    const bad = await e2e.run(["-q", "--attach", "localhost:4096", "hi"]);
    expect(bad.code).toBe(5);
    expect(bad.result.error?.message).toBe('--attach "localhost:4096" must be an http:// or https:// URL');
  });

  it("an opencode server too old for the backend (no /global/health, as 1.0.185): exit 5 saying so; server start refuses it", async () => {
    const old = spawn(FAKE_OPENCODE, ["serve"], { env: { ...e2e.home.env }, stdio: ["ignore", "pipe", "ignore"] });
    try {
      let seen = "";
      old.stdout!.on("data", (d: Buffer) => (seen += d.toString()));
      const url = await waitFor(() => /listening on (http:\/\/\S+)/.exec(seen)?.[1], 10_000, "the old server");
      const run = await e2e.run(["-q", "--attach", url, "hi"]);
      expect(run.code).toBe(5);
      expect(run.result.error).toMatchObject({
        name: "OpencodeServerTooOld",
        message: `the opencode server at ${url} is too old for oc-exec's server backend: it has no GET /global/health (opencode 1.14.41 and 1.18.33 have it; 1.18.33 is the release oc-exec is tested with). Upgrade opencode there, or run without --attach`,
      });
    } finally {
      old.kill("SIGTERM");
    }
    const state = join(e2e.home.root, "old-state");
    mkdirSync(state);
    const start = await e2e.runRaw(["server", "start", "--opencode", FAKE_OPENCODE], {
      extraEnv: { XDG_STATE_HOME: state, FAKE_OPENCODE_VERSION: "1.0.185" },
    });
    expect(start.code).toBe(5);
    expect(start.stdout).toBe("");
    expect(start.stderr).toMatch(/^oc-exec server start: the opencode server at http:\/\/127\.0\.0\.1:\d+ is too old/);
    expect(readRecords(state)).toEqual([]);
    await waitFor(
      () => !descendants(process.pid).some((p) => p.cmdline.includes("fake-opencode.mjs serve")),
      10_000,
      "the old server to be stopped",
    );
  });

  it("--config, --mcp and --pure cannot reach a running server: exit 5 naming the flag", async () => {
    const config = join(e2e.home.root, "extra.json");
    writeFileSync(config, "{}");
    const run = await e2e.run([...attach(), "--config", config, "hi"]);
    expect(run.code).toBe(5);
    expect(run.result.error?.message).toMatch(/^--config\/--mcp cannot apply to a running server/);
    const pure = await e2e.run([...attach(), "--pure", "hi"]);
    expect(pure.result.error?.message).toMatch(/^--pure cannot apply to a running server/);
  });

  it("a malformed opencode.json in the workspace: config_error", async () => {
    const dir = e2e.workspace();
    writeFileSync(join(dir, "opencode.json"), '{"model": ');
    const run = await e2e.run([...attach(), "--dir", dir, "scenario:plain"]);
    expect(run.code).toBe(5);
    expect(run.result.class).toBe("config_error");
  });

  it("a password-protected server: no or a wrong password is exit 5; OPENCODE_SERVER_PASSWORD or the URL's works", async () => {
    const bare = await bareServer({ OPENCODE_SERVER_PASSWORD: "s3cret-pass" });
    try {
      const none = await e2e.run(["-q", "--attach", bare.url, "scenario:plain"]);
      expect(none.code).toBe(5);
      expect(none.result.error?.name).toBe("ServerUnauthorized");
      const wrong = await e2e.run(["-q", "--attach", bare.url, "scenario:plain"], {
        extraEnv: { OPENCODE_SERVER_PASSWORD: "wrong" },
      });
      expect(wrong.code).toBe(5);
      const right = await e2e.run(["-q", "--attach", bare.url, "scenario:plain"], {
        extraEnv: { OPENCODE_SERVER_PASSWORD: "s3cret-pass" },
      });
      expect(right.code).toBe(0);
      const inUrl = await e2e.run([
        "-q",
        "--attach",
        bare.url.replace("http://", "http://opencode:s3cret-pass@"),
        "scenario:plain",
      ]);
      expect(inUrl.code).toBe(0);
      expect(eventsOf(inUrl, "run.started")[0]!.opencode.url).toBe(bare.url.replace(/\/$/, ""));
      expect(inUrl.stdout).not.toContain("s3cret-pass");
    } finally {
      await killServer({ pid: bare.child.pid! });
    }
  });

  it("a server of an untested release whose event stream ends mid-turn: a warning, then agent_error EventStreamLost", async () => {
    // Not opencode: a stand-in that answers like one, then drops its event stream after the prompt.
    let prompted = false;
    const fake = createServer((req, res) => {
      const path = req.url!.split("?")[0]!;
      if (path === "/global/health") return res.end(JSON.stringify({ healthy: true, version: "1.99.0" }));
      if (path === "/session" && req.method === "POST") return res.end(JSON.stringify({ id: "ses_fake", time: {} }));
      if (req.method === "PATCH") return res.end("{}");
      if (path === "/event") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write('data: {"type":"server.connected","properties":{}}\n\n');
        const timer = setInterval(() => {
          if (prompted) {
            clearInterval(timer);
            res.end();
          }
        }, 20);
        return;
      }
      if (path.endsWith("/prompt_async")) {
        prompted = true;
        res.writeHead(204);
        return res.end();
      }
      res.writeHead(404);
      res.end("{}");
    });
    await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
      const run = await e2e.run(["-q", "--attach", url, "scenario:plain"]);
      expect(run.code).toBe(1);
      expect(eventsOf(run, "warning").map((w) => w.message)).toEqual([
        `the opencode server at ${url} runs 1.99.0; oc-exec's server backend was tested with 1.18.33, and its event stream may differ`,
      ]);
      expect(run.result.error).toMatchObject({
        name: "EventStreamLost",
        message: `the opencode server at ${url} still answers, but it closed its event stream before the turn ended; the turn's outcome is unknown`,
      });
    } finally {
      await new Promise((r) => fake.close(r));
    }
  });

  it("the server dies mid-turn: agent_error ServerLost, with the result line", async () => {
    const bare = await bareServer();
    try {
      const run = await e2e.run(["-q", "--attach", bare.url, "--auto", "scenario:sleep-tool sleep"], {
        onSpawn: () => {
          void waitFor(
            () => descendants(bare.child.pid!).find((p) => p.cmdline === "sleep 300"),
            30_000,
            "the tool under the bare server",
          ).then(() => killServer({ pid: bare.child.pid! }));
        },
      });
      expect(run.code).toBe(1);
      expect(run.result.class).toBe("agent_error");
      expect(run.result.error?.name).toBe("ServerLost");
      expect(run.result.error?.message).toMatch(/went away mid-turn/);
    } finally {
      await killServer({ pid: bare.child.pid! });
    }
  });
});

describe("the library on a server", () => {
  it("OcExec bound to a server URL: a Session's turns run there, the second resumes the first, abort stops only the turn", async () => {
    const { OcExec } = await import("../../dist/index.js");
    const oc = new OcExec({ attach: server.url, env: e2e.home.env });
    const session = oc.session({ dir: e2e.home.workspace });
    const first: { type: string; session_id: string | null; opencode?: unknown }[] = [];
    for await (const event of session.run("scenario:plain first")) first.push(event);
    expect(first[0]!.opencode).toMatchObject({ url: server.url });
    expect(first.at(-1)).toMatchObject({ type: "result", class: "success" });
    const second: { type: string; resumed?: boolean; session_id: string | null }[] = [];
    for await (const event of session.run("scenario:plain second", { textDeltas: true })) second.push(event);
    expect(second.find((e) => e.type === "session.started")).toMatchObject({ resumed: true, session_id: session.id });
    expect(second.filter((e) => e.type === "message.delta").length).toBe(2);
    const turn = oc.runTurn("scenario:sleep-tool sleep", { auto: true, dir: e2e.home.workspace });
    const seen: { type: string; class?: string }[] = [];
    for await (const event of turn) {
      seen.push(event);
      if (event.type === "step.started") setTimeout(() => turn.abort(), 500);
    }
    expect(seen.at(-1)).toMatchObject({ type: "result", class: "interrupted" });
    await waitFor(() => !descendants(server.record.pid).some((p) => p.cmdline === "sleep 300"), 10_000, "sleep to end");
  });
});

describe("managed servers", () => {
  it("server start --idle-timeout: a running turn holds the server up; idle, it stops by itself, its record with it", async () => {
    const state = join(e2e.home.root, "idle-state");
    mkdirSync(state);
    const env = { XDG_STATE_HOME: state };
    const started = await e2e.runRaw(["server", "start", "--idle-timeout", "2s"], { extraEnv: env });
    expect(started.code).toBe(0);
    const url = started.stdout.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const [record] = readRecords(state);
    try {
      // The turn ends only when the test opens its gate, so the server is busy for as long as the
      // test needs, however slow the machine: no race against the 2 s idle clock.
      const gate = join(e2e.home.root, "idle-gate");
      const turn = e2e.run(["-q", "--attach", url, `scenario:gated gate:${gate}`], { extraEnv: env });
      await waitFor(() => e2e.server.requests.some((r) => r.userText.includes(gate)), 60_000, "the gated turn");
      const listed = await e2e.runRaw(["server", "list"], { extraEnv: env });
      expect(JSON.parse(listed.stdout)).toMatchObject({ url, pid: record!.pid, idle_timeout_ms: 2000 });
      expect(listed.stdout).not.toContain(record!.password);
      await new Promise((r) => setTimeout(r, 3000));
      expect(isAlive(record!.pid)).toBe(true);
      writeFileSync(gate, "");
      expect((await turn).code).toBe(0);
      await waitFor(() => !isAlive(record!.pid) && !isAlive(record!.supervisor_pid), 30_000, "the idle server to stop");
      expect(readRecords(state)).toEqual([]);
      expect((await e2e.runRaw(["server", "list"], { extraEnv: env })).stdout).toBe("");
    } finally {
      await killServer(record!);
    }
  });

  it("server stop of an unknown URL, without arguments, or start in a missing directory: exit 5", async () => {
    const unknown = await e2e.runRaw(["server", "stop", "http://127.0.0.1:1"]);
    expect(unknown.code).toBe(5);
    expect(unknown.stderr).toContain("no server oc-exec started is running at http://127.0.0.1:1");
    expect((await e2e.runRaw(["server", "stop"])).code).toBe(5);
    const missing = await e2e.runRaw(["server", "start", "--dir", "/nonexistent/dir"]);
    expect(missing.code).toBe(5);
    expect(missing.stdout).toBe("");
  });
});
