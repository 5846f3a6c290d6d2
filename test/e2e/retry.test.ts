// --retry and --fallback-model with the real opencode and the scripted model, on both backends:
// a stall on the first attempt, a provider overloaded for longer than opencode's own retries, an
// authentication error (never retried), a fallback model, and a wait that would pass --timeout.
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { OcEvent } from "../../src/contract/schema.js";
import { providerConfig } from "../../src/domain/scripted/hermetic-home.js";
import { useE2E } from "../support/e2e.js";
import { waitFor } from "../support/procs.js";
import { killServer, readRecords, useWarmServer } from "../support/warm-server.js";

const e2e = useE2E();
const warm = useWarmServer(e2e);
const mark = () => `r-${randomBytes(4).toString("hex")}`;
const ofType = <T extends OcEvent["type"]>(events: OcEvent[], type: T) =>
  events.filter((e): e is Extract<OcEvent, { type: T }> => e.type === type);

describe.each([
  ["opencode run", false],
  ["--attach", true],
])("--retry on %s", (_name, attach) => {
  const args = (rest: string[]) => (attach ? ["--attach", warm.url, ...rest] : rest);

  it("a stall on the first attempt, then an answer: success on attempt 2, in the same session", async () => {
    const m = mark();
    const run = await e2e.run(
      // 6 s: longer than opencode's own silences before its first model call on a loaded machine,
      // so the stall is the model's (3 s let a slow start time out before the call was made).
      args(["--retry", "1", "--idle-timeout", "6s", "--retry-delay", "0", `scenario:stall-once ${m}`]),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ class: "success", text: "Answered on a later try.", attempts: 2 });
    expect(run.result.failed_attempts).toEqual([
      expect.objectContaining({ attempt: 1, class: "timeout", name: "TimeoutError" }),
    ]);
    const [retry, ...more] = ofType(run.events, "retry");
    expect(more).toEqual([]);
    expect(retry).toMatchObject({ failed_attempt: 1, class: "timeout", wait_ms: 0, resumed: true });
    // Every event carries its attempt; the retry event closes attempt 1.
    expect(run.events.every((e) => e.attempt === 1 || e.attempt === 2)).toBe(true);
    expect(run.events.filter((e) => e.attempt === 2).length).toBeGreaterThan(0);
    expect(retry!.attempt).toBe(1);
    // One model call lost: two requests, the second in the same session, told why.
    const requests = e2e.requestsFor(m);
    expect(requests).toHaveLength(2);
    const sessions = new Set(run.events.flatMap((e) => (e.session_id ? [e.session_id] : [])));
    expect(sessions.size).toBe(1);
    expect(JSON.stringify(requests[1]!.body.messages)).toContain(
      "Your previous attempt at this task was interrupted (TimeoutError",
    );
    expect(run.stderr).toMatch(/↻ attempt 1 failed \(timeout: TimeoutError\)/);
  }, 90_000);

  it("a --verify repair that stalls is retried too, in the session: success, the attempts counted on from the turn's", async () => {
    const m = mark();
    const dir = e2e.workspace();
    const run = await e2e.run(
      args([
        "--retry",
        "1",
        "--idle-timeout",
        "6s",
        "--retry-delay",
        "0",
        "--auto",
        "--verify",
        "test -f fixed.txt",
        `scenario:verify-fix-stall ${m}`,
      ]),
      { cwd: dir },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ class: "success", text: "Fixed: the check passes now.", attempts: 2 });
    expect(run.result.failed_attempts).toEqual([
      expect.objectContaining({ attempt: 1, class: "timeout", name: "TimeoutError" }),
    ]);
    expect(run.result.verification).toMatchObject({ passed: true, rounds: 2 });
    expect(ofType(run.events, "retry")).toEqual([
      expect.objectContaining({ failed_attempt: 1, class: "timeout", resumed: true, attempt: 1 }),
    ]);
    // The turn, the repair that stalled, its retry (told why), the answer after the fix.
    const requests = e2e.requestsFor(m);
    expect(requests).toHaveLength(4);
    expect(JSON.stringify(requests[2]!.body.messages)).toContain(
      "Your previous attempt at this task was interrupted (TimeoutError",
    );
    expect(new Set(run.events.flatMap((e) => (e.session_id ? [e.session_id] : []))).size).toBe(1);
    expect(readFileSync(join(dir, "fixed.txt"), "utf8")).toBe("fixed\n");
  }, 120_000);

  it("without --retry the same stall is exit 124", async () => {
    const run = await e2e.run(args(["--idle-timeout", "3s", `scenario:stall-once ${mark()}`]));
    expect(run.code).toBe(124);
    expect(run.result).not.toHaveProperty("attempts");
    expect(run.events.some((e) => "attempt" in e)).toBe(false);
  }, 60_000);
});

describe("--retry against an unreliable provider", () => {
  it("overloaded for longer than opencode's own retries, then fine: exit 4 without --retry, success with it", async () => {
    const without = await e2e.run([`scenario:overloaded-once ${mark()}`]);
    expect(without.code).toBe(4);
    const m = mark();
    const run = await e2e.run(["--retry", "2", "--retry-delay", "0", `scenario:overloaded-once ${m}`]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ attempts: 2, text: "Answered once the provider recovered." });
    expect(run.result.failed_attempts).toEqual([
      expect.objectContaining({ attempt: 1, class: "api_error", name: "APIError" }),
    ]);
    // opencode's own calls (the first and its retries: 6 as observed), each refused; then oc-exec's
    // second attempt, one call in the same session, told why.
    const requests = e2e.requestsFor(m);
    const resumed = requests.map((r) => JSON.stringify(r.body.messages).includes("previous attempt at this task"));
    expect(resumed.at(-1)).toBe(true);
    expect(resumed.filter(Boolean)).toHaveLength(1);
    expect(requests.length).toBeGreaterThanOrEqual(7);
  }, 120_000);

  it("a 401 is never retried: exit 4 after one attempt, the provider asked once", async () => {
    const m = mark();
    const run = await e2e.run(["--retry", "3", "--retry-delay", "0", `scenario:http-401 ${m}`]);
    expect(run.code).toBe(4);
    expect(run.result).toMatchObject({ attempts: 1, failed_attempts: [] });
    expect(ofType(run.events, "retry")).toEqual([]);
    expect(e2e.requestsFor(m)).toHaveLength(1);
  }, 60_000);

  it("a wait that would pass --timeout is not taken: api_error at once, and a warning says why", async () => {
    const m = mark();
    const started = Date.now();
    const run = await e2e.run([
      // opencode's own retries take ~8 s here, several times that on a loaded machine: room for both.
      "--timeout",
      "80s",
      "--retry",
      "1",
      "--retry-delay",
      "120s",
      "--retry-max-delay",
      "120s",
      `scenario:overloaded-once ${m}`,
    ]);
    expect(run.code).toBe(4);
    expect(Date.now() - started).toBeLessThan(75_000);
    const skipped = ofType(run.events, "warning").filter((w) => w.code === "retry_skipped");
    expect(skipped.map((w) => w.message)).toEqual([
      expect.stringMatching(/^attempt 1 failed \(APIError: .*\); waiting \S+ for attempt 2 would pass --timeout 80s$/),
    ]);
  }, 120_000);

  it("--fallback-model: once the model's attempts are spent, the fallback answers; the result names it", async () => {
    const config = JSON.parse(providerConfig(e2e.server.url)) as {
      provider: { fake: { models: Record<string, object> } };
    };
    config.provider.fake.models["fake-backup"] = { name: "Backup" };
    const m = mark();
    const run = await e2e.run(
      ["--fallback-model", "fake/fake-backup", "--retry-delay", "0", `scenario:overloaded ${m}`],
      {
        extraEnv: { OPENCODE_CONFIG_CONTENT: JSON.stringify(config) },
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ attempts: 2, text: "Answered by fake-backup.", model: "fake/fake-backup" });
    expect(ofType(run.events, "retry")[0]).toMatchObject({ model: "fake/fake-backup" });
    expect(ofType(run.events, "step.finished").at(-1)).toMatchObject({ attempt: 2 });
  }, 120_000);
});

describe("a provider's long Retry-After: no sleeping through the turn", () => {
  it("opencode run: silent while opencode waits to retry, past --idle-timeout: api_error (exit 4), not a stall, not retried", async () => {
    const m = mark();
    const run = await e2e.run([
      // Long enough that a loaded machine's pauses before the provider's answer are not taken for the
      // wait: what is tested is the silence while opencode waits to retry.
      "--idle-timeout",
      "8s",
      "--retry",
      "2",
      "--retry-delay",
      "0",
      `scenario:retry-after-long ${m}`,
    ]);
    expect(run.code).toBe(4);
    expect(run.result.error).toMatchObject({
      name: "APIError",
      message:
        "opencode was waiting to retry a failed model call (AI_APICallError: Overloaded), longer than --idle-timeout 8s allows; oc-exec stopped the turn instead of sleeping through it",
    });
    expect(run.result.attempts).toBe(1);
    expect(e2e.requestsFor(m)).toHaveLength(1);
  }, 60_000);

  it("--attach: the server says when it will retry; a wait past --timeout stops the turn at once, exit 4", async () => {
    const m = mark();
    const started = Date.now();
    const run = await e2e.run(["--attach", warm.url, "--timeout", "60s", `scenario:retry-after-long ${m}`]);
    expect(run.code).toBe(4);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(run.result.error?.message).toMatch(
      /^opencode was waiting to retry a failed model call \(Provider is overloaded\) for (59m\d+s|60m0s), longer than --timeout 1m allows; oc-exec stopped the turn instead of sleeping through it$/,
    );
  }, 60_000);
});

/**
 * A free port below the kernel's ephemeral range (ip_local_port_range, 32768 and up here): a port
 * from that range, once freed, can be taken by any outgoing connection on this busy machine before
 * the server is restarted on it.
 */
/** A probe for waitFor: true once nothing holds the port (a listener, or TIME_WAIT without reuse). */
const portFree = (port: number) => {
  let free = false;
  let probing = false;
  return () => {
    if (!probing) {
      probing = true;
      const probe = createServer();
      probe.once("error", () => {
        probing = false;
      });
      probe.listen(port, "127.0.0.1", () =>
        probe.close(() => {
          free = true;
        }),
      );
    }
    return free;
  };
};

async function freePort(): Promise<number> {
  const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32768;
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * Math.max(1, low - 20000));
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once("error", () => resolve(false));
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

describe("--attach: the server killed and restarted between attempts", () => {
  it("the server lost mid-turn, the same URL up again: success on a later attempt, in the same session", async () => {
    const port = await freePort();
    const dir = e2e.workspace();
    const start = () =>
      e2e.runRaw(["server", "start", "--port", String(port), "--idle-timeout", "15m", "--dir", dir], { cwd: dir });
    const first = await start();
    expect(first.code, first.stderr).toBe(0);
    const url = first.stdout.trim();
    const records = () => readRecords(e2e.home.env.XDG_STATE_HOME!).filter((r) => r.url === url);
    const gate = join(dir, "gate");
    const m = mark();
    const turn = e2e.run(
      // Attempts every 1.5–3 s for as long as the port may take to come back (see below).
      [
        "--attach",
        url,
        "--retry",
        "60",
        "--retry-delay",
        "3s",
        "--retry-max-delay",
        "3s",
        `scenario:gated gate:${gate} ${m}`,
      ],
      { cwd: dir },
    );
    try {
      await waitFor(() => e2e.requestsFor(m).length >= 1, 30_000, "the first model call");
      await killServer(records()[0]!);
      // The killed server's own side of its connections stays in TIME_WAIT (up to 60 s), and
      // opencode's listener does not reuse the address: the port is usable again only then.
      await waitFor(portFree(port), 90_000, `port ${port} to be free again`);
      const second = await start();
      expect(second.code, second.stderr).toBe(0);
      writeFileSync(gate, "");
      const run = await turn;
      expect(run.code, run.stderr).toBe(0);
      expect(run.result).toMatchObject({ class: "success", text: "The gate opened." });
      expect(run.result.attempts).toBeGreaterThanOrEqual(2);
      expect(["ServerLost", "EventStreamLost"]).toContain(run.result.failed_attempts?.[0]?.name);
      const sessions = new Set(run.events.flatMap((e) => (e.session_id ? [e.session_id] : [])));
      expect(sessions.size).toBe(1);
      // The restarted server's new password never shows.
      const live = records().at(-1)!;
      expect(run.stdout + run.stderr).not.toContain(live.password);
    } finally {
      writeFileSync(gate, "");
      await turn.catch(() => undefined);
      await e2e.runRaw(["server", "stop", url]);
      for (const r of records()) await killServer(r);
    }
  }, 240_000);
});

describe("--retry in a batch and --verify in a conversation", () => {
  it("a task's retry: the task recovers on attempt 2, and batch.result counts the retry", async () => {
    const dir = e2e.workspace();
    const tasks = [
      { id: "flaky", prompt: `scenario:overloaded-once ${mark()}`, retry: 1 },
      { id: "steady", prompt: `scenario:plain ${mark()}` },
    ];
    writeFileSync(join(dir, "tasks.jsonl"), `${tasks.map((t) => JSON.stringify(t)).join("\n")}\n`);
    const run = await e2e.runRaw(["batch", "tasks.jsonl", "--retry-delay", "0"], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
    expect(summary.retries).toBe(1);
    expect(
      Object.fromEntries(
        summary.tasks.map((t: { id: string; class: string; attempts?: number }) => [t.id, [t.class, t.attempts]]),
      ),
      // A task that may not retry carries no attempts.
    ).toEqual({ flaky: ["success", 2], steady: ["success", undefined] });
  }, 120_000);

  it("a conversation checks each turn: the first is sent back once, the second passes at once", async () => {
    const dir = e2e.workspace();
    const lines = [`{"prompt": "scenario:verify-fix ${mark()}"}`, `{"prompt": "scenario:plain ${mark()}"}`].join("\n");
    const run = await e2e.run(["--input-format", "jsonl", "--auto", "--verify", "test -f fixed.txt"], {
      cwd: dir,
      stdin: `${lines}\n`,
    });
    const results = run.events.filter((e) => e.type === "result");
    expect(results.map((r) => r.type === "result" && [r.turn, r.class, r.verification?.rounds])).toEqual([
      [1, "success", 2],
      [2, "success", 1],
    ]);
    expect(run.events.at(-1)).toMatchObject({ type: "conversation.result", exit_code: 0 });
  }, 120_000);
});
