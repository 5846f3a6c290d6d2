// --retry and --fallback-model with the real opencode and the scripted model, on both backends:
// a stall on the first attempt, a provider overloaded for longer than opencode's own retries, an
// authentication error (never retried), a fallback model, and a wait that would pass --timeout.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { OcEvent } from "../../src/contract/schema.js";
import { providerConfig } from "../../src/scripted/hermetic-home.js";
import { useE2E } from "../support/e2e.js";
import { useWarmServer } from "../support/warm-server.js";

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
      args(["--retry", "1", "--idle-timeout", "3s", "--retry-delay", "0", `scenario:stall-once ${m}`]),
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
    // opencode's own six calls, then oc-exec's second attempt.
    expect(e2e.requestsFor(m)).toHaveLength(7);
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
      "--timeout",
      "40s",
      "--retry",
      "1",
      "--retry-delay",
      "60s",
      "--retry-max-delay",
      "60s",
      `scenario:overloaded-once ${m}`,
    ]);
    expect(run.code).toBe(4);
    expect(Date.now() - started).toBeLessThan(35_000);
    const skipped = ofType(run.events, "warning").filter((w) => w.code === "retry_skipped");
    expect(skipped.map((w) => w.message)).toEqual([
      expect.stringMatching(/^attempt 1 failed \(APIError: .*\); waiting \S+ for attempt 2 would pass --timeout 40s$/),
    ]);
  }, 60_000);

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
