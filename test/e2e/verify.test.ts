// --verify with the real opencode and the scripted model: the checks run after a turn that
// succeeded; a failing one sends the agent back in the same session with its output, and the turn
// ends on the last round. `scenario:verify-fix` claims success without doing the work, and does it
// (writes fixed.txt) once sent back; `scenario:plain` never does.
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { OcEvent } from "../../src/contract/schema.js";
import type { ChatRequest } from "../../src/domain/scripted/model-server.js";
import { useE2E } from "../support/e2e.js";
import { sandboxSkip } from "../support/sandbox-skip.js";
import { useWarmServer } from "../support/warm-server.js";

const e2e = useE2E();
const warm = useWarmServer(e2e);
const mark = () => `v-${randomBytes(4).toString("hex")}`;

const ofType = <T extends OcEvent["type"]>(events: OcEvent[], type: T) =>
  events.filter((e): e is Extract<OcEvent, { type: T }> => e.type === type);

/** The last user message of a request: what oc-exec sent that round. */
function lastUser(body: ChatRequest): string {
  const user = body.messages.filter((m) => m.role === "user").at(-1);
  const content = user?.content;
  return typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p) => ("text" in p ? String(p.text) : "")).join("")
      : "";
}

describe.each([
  ["opencode run", [] as string[]],
  ["--attach", ["--attach"]],
])("--verify on %s", (_name, via) => {
  const args = (rest: string[]) => (via.length > 0 ? ["--attach", warm.url, ...rest] : rest);

  it("a check that passes: success, one round, verify events and result.verification", async () => {
    const m = mark();
    const run = await e2e.run(args(["--verify", "true", `scenario:plain ${m}`]), { cwd: e2e.workspace() });
    expect(run.code).toBe(0);
    expect(ofType(run.events, "verify.started").map((e) => [e.command, e.round])).toEqual([["true", 1]]);
    expect(ofType(run.events, "verify.finished").map((e) => [e.command, e.round, e.passed, e.exit_code])).toEqual([
      ["true", 1, true, 0],
    ]);
    expect(run.result.verification).toMatchObject({
      passed: true,
      rounds: 1,
      checks: [{ command: "true", exit_code: 0, signal: null, timed_out: false, output: "" }],
    });
    expect(e2e.requestsFor(m)).toHaveLength(1);
  }, 60_000);

  it("a check that fails once: the agent is sent back in the same session with the output, fixes it, success", async () => {
    const m = mark();
    const dir = e2e.workspace();
    const run = await e2e.run(
      args([
        "--auto",
        "--verify",
        "test -f fixed.txt || { echo 'fixed.txt is missing'; exit 3; }",
        `scenario:verify-fix ${m}`,
      ]),
      { cwd: dir },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ class: "success", text: "Fixed: the check passes now." });
    expect(existsSync(join(dir, "fixed.txt"))).toBe(true);
    expect(ofType(run.events, "verify.finished").map((e) => [e.round, e.passed, e.exit_code, e.output])).toEqual([
      [1, false, 3, "fixed.txt is missing"],
      [2, true, 0, ""],
    ]);
    expect(run.result.verification).toMatchObject({ passed: true, rounds: 2 });
    // One request for the turn, two for the repair (the command, then the answer).
    const requests = e2e.requestsFor(m);
    expect(requests).toHaveLength(3);
    expect(lastUser(requests[1]!.body)).toBe(
      "The check `test -f fixed.txt || { echo 'fixed.txt is missing'; exit 3; }` failed with exit status 3 after your changes. Its output ends with:\n\n```\nfixed.txt is missing\n```\n\nFix the cause so that the check passes, then say what you changed.",
    );
    // One session throughout: every event names it, and usage covers both rounds.
    const sessions = new Set(run.events.flatMap((e) => (e.session_id ? [e.session_id] : [])));
    expect(sessions.size).toBe(1);
    expect(run.result.steps).toBe(3);
  }, 90_000);

  it("a check that never passes: exit 1, VerificationFailed, after --verify-attempts repairs", async () => {
    const m = mark();
    const run = await e2e.run(args(["--verify", "echo nope; false", "--verify-attempts", "1", `scenario:plain ${m}`]), {
      cwd: e2e.workspace(),
    });
    expect(run.code).toBe(1);
    expect(run.result.class).toBe("agent_error");
    expect(run.result.error).toMatchObject({
      name: "VerificationFailed",
      message:
        '--verify "echo nope; false" still fails (exit 1) after 1 repair by the agent; its output ended with:\nnope',
    });
    expect(run.result.verification).toMatchObject({ passed: false, rounds: 2 });
    expect(e2e.requestsFor(m)).toHaveLength(2);
  }, 90_000);
});

describe("--verify: what it cannot do, and what stops it", () => {
  it("--verify-attempts 0 checks only: a failure is exit 1 after the turn, nothing sent back", async () => {
    const m = mark();
    const run = await e2e.run(["--verify", "false", "--verify-attempts", "0", `scenario:plain ${m}`]);
    expect(run.code).toBe(1);
    expect(run.result.error?.message).toBe('--verify "false" still fails (exit 1) after the turn; it printed nothing');
    expect(e2e.requestsFor(m)).toHaveLength(1);
  }, 60_000);

  it("a command the shell cannot run is a configuration error (exit 5), named after the turn", async () => {
    const m = mark();
    const run = await e2e.run(["--verify", "no-such-check-command-xyz", `scenario:plain ${m}`]);
    expect(run.code).toBe(5);
    expect(run.result.error?.name).toBe("VerifyCommandError");
    expect(run.result.error?.message).toMatch(
      /^the shell could not run --verify "no-such-check-command-xyz" \(exit 127: command not found\); its output ended with:\n.*not found/,
    );
    expect(e2e.requestsFor(m)).toHaveLength(1);
  }, 60_000);

  it("--timeout covers the checks: a check still running is stopped, exit 124, nothing left running", async () => {
    const tag = mark();
    // Long enough for the turn itself on a busy machine; the check outlasts it by far.
    const run = await e2e.run(["--timeout", "15s", "--verify", `sleep 60 # ${tag}`, `scenario:plain ${tag}`]);
    expect(run.code).toBe(124);
    expect(run.result.error).toMatchObject({ name: "TimeoutError", timeout: { kind: "turn", ms: 15000 } });
    const finished = ofType(run.events, "verify.finished");
    expect(finished.map((e) => [e.passed, e.exit_code])).toEqual([[false, null]]);
    const left = readdirSync("/proc").filter((p) => {
      try {
        return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, "utf8").includes(tag);
      } catch {
        return false;
      }
    });
    expect(left).toEqual([]);
  }, 60_000);

  it("--verify-timeout ends a slow check: it failed, and the agent hears it did not finish", async () => {
    const m = mark();
    const run = await e2e.run([
      "--verify",
      "sleep 20",
      "--verify-timeout",
      "1s",
      "--verify-attempts",
      "1",
      `scenario:plain ${m}`,
    ]);
    expect(run.code).toBe(1);
    expect(ofType(run.events, "verify.finished").map((e) => [e.timed_out, e.exit_code])).toEqual([
      [true, null],
      [true, null],
    ]);
    expect(lastUser(e2e.requestsFor(m)[1]!.body)).toMatch(/^The check `sleep 20` did not finish within its time limit/);
  }, 60_000);

  it("budgets cover the repairs: --max-steps crossed while the agent fixes the check is exit 6", async () => {
    const m = mark();
    const run = await e2e.run(
      ["--auto", "--max-steps", "2", "--verify", "test -f fixed.txt", `scenario:verify-fix ${m}`],
      {
        cwd: e2e.workspace(),
      },
    );
    expect(run.code).toBe(6);
    expect(run.result.error).toMatchObject({ name: "BudgetExceeded", budget: { limit: "steps", max: 2 } });
  }, 60_000);

  it("a check's output is redacted: a secret it prints reaches neither stdout nor the model", async () => {
    const m = mark();
    const token = randomBytes(16).toString("hex");
    const run = await e2e.run(
      ["--verify", "echo token=$MY_API_TOKEN; false", "--verify-attempts", "1", `scenario:plain ${m}`],
      { extraEnv: { MY_API_TOKEN: token } },
    );
    expect(run.code).toBe(1);
    expect(ofType(run.events, "verify.finished")[0]?.output).toBe("token=[REDACTED]");
    expect(run.stdout + run.stderr).not.toContain(token);
    expect(JSON.stringify(e2e.requestsFor(m))).not.toContain(token);
  }, 60_000);

  it("limits without a check are usage errors; a batch task's verify runs in its dir", async () => {
    const run = await e2e.run(["--verify-attempts", "3", "scenario:plain x"]);
    expect(run.code).toBe(5);
    expect(run.result.error?.message).toBe("--verify-attempts needs --verify: without a check it would do nothing");
  }, 60_000);
});

const { skip: noSandbox } = await sandboxSkip("--verify in the sandbox (test/e2e/verify.test.ts)");

describe("--verify on every path", () => {
  it.skipIf(noSandbox)(
    "in the sandbox: the check runs where the agent's tools run, and cannot write outside",
    async () => {
      const dir = e2e.workspace();
      // Outside HOME: the sandbox's HOME is a throwaway of its own, where a write lands and is gone.
      const outside = `/tmp/oc-exec-verify-${basename(dirname(dir))}-${basename(dir)}.txt`;
      const run = await e2e.run(
        [
          "--sandbox",
          "workspace-write",
          "--verify",
          `echo inside > inside.txt && echo outside > ${outside}`,
          "--verify-attempts",
          "0",
          "scenario:plain sandboxed check",
        ],
        { cwd: dir },
      );
      expect(run.code).toBe(1);
      expect(readFileSync(join(dir, "inside.txt"), "utf8")).toBe("inside\n");
      expect(existsSync(outside)).toBe(false);
      expect(ofType(run.events, "verify.finished")[0]?.output).toMatch(/Read-only file system|Permission denied/);
    },
    60_000,
  );

  it("a batch: --verify for every task, a task's own verify list wins ([] turns it off); the summary names the failure", async () => {
    const dir = e2e.workspace();
    const tasks = [
      { id: "checked", prompt: "scenario:plain checked" },
      { id: "unchecked", prompt: "scenario:plain unchecked", verify: [] },
      { id: "own", prompt: "scenario:plain own", verify: ["test -d ."] },
    ];
    writeFileSync(join(dir, "tasks.jsonl"), `${tasks.map((t) => JSON.stringify(t)).join("\n")}\n`);
    const run = await e2e.runRaw(["batch", "tasks.jsonl", "--verify", "false", "--verify-attempts", "0"], { cwd: dir });
    expect(run.code).toBe(1);
    const summary = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
    expect(
      Object.fromEntries(
        summary.tasks.map((t: { id: string; class: string; error: { name: string } | null }) => [
          t.id,
          [t.class, t.error?.name ?? null],
        ]),
      ),
    ).toEqual({
      checked: ["agent_error", "VerificationFailed"],
      unchecked: ["success", null],
      own: ["success", null],
    });
  }, 90_000);
});
