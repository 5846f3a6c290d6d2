// --warm with --acp (OC_EXEC_WARM=1): the real `opencode acp` behind a shell that counts its starts,
// kept by a broker between runs. The second run's turn goes to the agent the first started; a turn
// stopped mid-way (--timeout), or a run killed outright, ends the agent, never lent again; the idle
// limit and `server stop` end it too; and nothing is left behind.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bundledBinary } from "../../src/domain/opencode/locate.js";
import { useE2E } from "../support/e2e.js";
import { marked, waitFor } from "../support/procs.js";
import { BIN } from "../support/run-cli.js";
import { sandboxSkip } from "../support/sandbox-skip.js";

const e2e = useE2E();
const { skip } = await sandboxSkip("the sandboxed --warm --acp test (test/e2e/acp-warm.test.ts)");
// Every test's registry, whose warm agents are stopped after it, passed or not.
const registries: Record<string, string>[] = [];
afterEach(async () => {
  for (const extraEnv of registries.splice(0)) await e2e.runRaw(["server", "stop", "--all"], { extraEnv });
});

/** A workspace, its agent command line (each start of the agent leaves a line), and the runs' environment. */
function setup(idle = "60s") {
  const ws = e2e.workspace();
  const mark = randomUUID();
  const starts = join(ws, "starts.txt");
  const acp = `/bin/sh -c 'echo started >> ${starts}; exec ${bundledBinary()!.path} acp'`;
  // A registry of the test's own: server list shows this test's warm agents only.
  const extraEnv = {
    OC_EXEC_WARM: "1",
    OC_EXEC_WARM_IDLE: idle,
    OC_EXEC_TEST_MARK: mark,
    XDG_STATE_HOME: join(e2e.home.root, `state-${mark}`),
  };
  registries.push(extraEnv);
  const startsSoFar = () => (existsSync(starts) ? readFileSync(starts, "utf8") : "");
  const turn = (prompt: string, ...flags: string[]) =>
    e2e.run(["-q", "--acp", acp, "--auto", ...flags, prompt], { cwd: ws, extraEnv });
  const list = async () =>
    (await e2e.runRaw(["server", "list"], { cwd: ws, extraEnv })).stdout
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { url: string; acp?: { name: string }; warm_key?: string });
  const left = () => waitFor(() => marked(mark).length === 0, 30_000, "the warm agent and its broker to end");
  return { ws, mark, acp, extraEnv, startsSoFar, turn, list, left };
}

describe("--warm --acp: an agent kept between runs", () => {
  it("two runs, one agent: the second's turn on the agent the first started; server list shows it, server stop ends it", async () => {
    const w = setup();
    const first = await w.turn("scenario:tool warm-acp-1");
    expect(first.code, first.stderr).toBe(0);
    expect(first.result).toMatchObject({ class: "success", text: "The command printed hi." });
    const second = await w.turn("scenario:tool warm-acp-2");
    expect(second.code, second.stderr).toBe(0);
    expect(second.result).toMatchObject({ class: "success", text: "The command printed hi." });
    // The same agent, as it introduced itself to the first run, in both runs' run.started.
    for (const run of [first, second])
      expect((run.events[0] as { acp?: unknown }).acp).toEqual({
        name: "sh",
        agent_name: "OpenCode",
        version: "1.18.33",
        protocol_version: 1,
      });
    expect(first.result.session_id).not.toBe(second.result.session_id);
    expect(w.startsSoFar()).toBe("started\n");
    expect(second.events.filter((e) => e.type === "warning")).toEqual([]);
    const [listed, ...more] = await w.list();
    expect(more).toEqual([]);
    expect(listed).toMatchObject({ url: expect.stringMatching(/^unix:\/.*\.sock$/), acp: { name: "sh" } });
    expect(marked(w.mark).length).toBeGreaterThan(0);
    const stop = await e2e.runRaw(["server", "stop", "--all"], { cwd: w.ws, extraEnv: w.extraEnv });
    expect(stop.code, stop.stderr).toBe(0);
    await w.left();
    expect(await w.list()).toEqual([]);
  }, 120_000);

  it("a turn stopped mid-way ends the agent: the next run starts another", async () => {
    const w = setup();
    const stalled = await w.turn("scenario:hang warm-acp-3", "--timeout", "4s");
    expect(stalled.code, stalled.stderr).toBe(124);
    await w.left();
    expect(await w.list()).toEqual([]);
    const after = await w.turn("scenario:plain warm-acp-4");
    expect(after.code, after.stderr).toBe(0);
    expect(w.startsSoFar()).toBe("started\nstarted\n");
    await e2e.runRaw(["server", "stop", "--all"], { cwd: w.ws, extraEnv: w.extraEnv });
    await w.left();
  }, 120_000);

  it("a run killed outright mid-turn: its broker ends the agent, nothing is left", async () => {
    const w = setup();
    const child = spawn(process.execPath, [BIN, "-q", "--acp", w.acp, "--auto", "scenario:hang warm-acp-5"], {
      cwd: w.ws,
      env: { ...e2e.home.env, ...w.extraEnv },
      stdio: ["ignore", "ignore", "ignore"],
    });
    // Killed once the model has the turn's request: the agent is mid-turn.
    await waitFor(() => e2e.requestsFor("warm-acp-5").length > 0, 60_000, "the turn's model call");
    child.kill("SIGKILL");
    await w.left();
    expect(await w.list()).toEqual([]);
  }, 120_000);

  it("the idle limit (OC_EXEC_WARM_IDLE) ends an agent no run took", async () => {
    const w = setup("2s");
    const run = await w.turn("scenario:plain warm-acp-6");
    expect(run.code, run.stderr).toBe(0);
    await w.left();
    expect(await w.list()).toEqual([]);
  }, 120_000);

  it("no broker can be had (its socket's path would not fit): the run starts its own agent, a warm_cold warning says why", async () => {
    const w = setup();
    const state = join(e2e.home.root, "s".repeat(100));
    const run = await e2e.run(["-q", "--acp", w.acp, "scenario:plain warm-acp-8"], {
      cwd: w.ws,
      extraEnv: { ...w.extraEnv, XDG_STATE_HOME: state },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.events.filter((e) => e.type === "warning")).toEqual([
      expect.objectContaining({
        code: "warm_cold",
        message: expect.stringMatching(
          /^ran cold: the warm agent did not start: its socket's path would be too long for a Unix socket: \/.*\.sock$/,
        ),
      }),
    ]);
    expect(w.startsSoFar()).toBe("started\n");
    await w.left();
  }, 120_000);

  it.skipIf(skip)(
    "with a sandbox: the run starts its own agent, and a warm_cold warning says why",
    async () => {
      const w = setup();
      const run = await e2e.run(
        ["-q", "--acp", "opencode", "--sandbox", "read-only", "--warm", "scenario:plain warm-acp-7"],
        {
          cwd: w.ws,
          extraEnv: { OC_EXEC_TEST_MARK: w.mark, XDG_STATE_HOME: w.extraEnv.XDG_STATE_HOME },
        },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.events.filter((e) => e.type === "warning" && e.code === "warm_cold")).toEqual([
        expect.objectContaining({ message: "ran cold: a sandboxed agent's HOME is the run's own, gone with it" }),
      ]);
      expect(await w.list()).toEqual([]);
      await w.left();
    },
    120_000,
  );
});
