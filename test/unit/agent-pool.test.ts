// A batch's pool of ACP agents, without processes: which task gets which agent, and which agents
// end when. The real agents sharing a process: test/e2e/acp.test.ts.
import { describe, expect, it } from "vitest";
import type { AcpBackend } from "../../src/hosts/acp/acp-backend.js";
import { makeAgentPool } from "../../src/hosts/agent-pool.js";
import type { Placement } from "../../src/plan/placement.js";

type Fake = AcpBackend & { n: number; ok: boolean; closed: number };

/** A pool whose agents are fakes: `made` lists them in the order they were started. */
function fakePool() {
  const made: Fake[] = [];
  const pool = makeAgentPool(async () => {
    const fake = {
      n: made.length + 1,
      ok: true,
      closed: 0,
      problem: null,
      opencode: { path: "agent", version: null },
      check: () => ({ problem: null, warnings: [] }),
      open: async () => ({ problem: { name: "X", message: "not in these tests" } }),
      reusable: () => fake.ok && fake.closed === 0,
      close: async () => {
        fake.closed++;
      },
    } as Fake;
    made.push(fake);
    return fake;
  });
  return { pool, made };
}

const placement = (over: Partial<Placement> = {}) =>
  ({
    acp: { name: "gemini", argv: ["gemini", "--acp"], sandbox: null },
    opencode: null,
    dir: "/work/a",
    env: { HOME: "/home/u" },
    policy: { value: null },
    opencodeConfig: { content: undefined },
    startupTimeout: null,
    sandbox: null,
    ssh: null,
    ...over,
  }) as Placement & { acp: NonNullable<Placement["acp"]> };

const signal = new AbortController().signal;

describe("a batch's agents", () => {
  it("tasks one after another on the same placement: one agent, ended with the pool", async () => {
    const { pool, made } = fakePool();
    const maker = pool.maker(placement());
    for (let i = 0; i < 3; i++) {
      const backend = await maker(signal);
      await backend.close?.();
    }
    expect(made.map((m) => m.n)).toEqual([1]);
    expect(made[0]!.closed).toBe(0);
    await pool.close();
    expect(made[0]!.closed).toBe(1);
  });

  it("tasks side by side: an agent each, both kept for the next tasks", async () => {
    const { pool, made } = fakePool();
    const maker = pool.maker(placement());
    const [a, b] = await Promise.all([maker(signal), maker(signal)]);
    await a.close?.();
    await b.close?.();
    const [c, d] = await Promise.all([maker(signal), maker(signal)]);
    expect(made).toHaveLength(2);
    await c.close?.();
    await d.close?.();
    await pool.close();
    expect(made.map((m) => m.closed)).toEqual([1, 1]);
  });

  it("an agent stopped mid-turn (not reusable) is ended at its task's end; the next task starts another", async () => {
    const { pool, made } = fakePool();
    const maker = pool.maker(placement());
    const first = await maker(signal);
    made[0]!.ok = false;
    await first.close?.();
    expect(made[0]!.closed).toBe(1);
    await (await maker(signal)).close?.();
    expect(made).toHaveLength(2);
    await pool.close();
    expect(made.map((m) => m.closed)).toEqual([1, 1]);
  });

  it("an agent that went away while it waited is ended, not lent", async () => {
    const { pool, made } = fakePool();
    const maker = pool.maker(placement());
    await (await maker(signal)).close?.();
    made[0]!.ok = false;
    const next = await maker(signal);
    expect(made[0]!.closed).toBe(1);
    expect(made).toHaveLength(2);
    await next.close?.();
    await pool.close();
    expect(made[1]!.closed).toBe(1);
  });

  it("a different workspace, agent, environment or policy: another agent", async () => {
    const { pool, made } = fakePool();
    const others = [
      placement(),
      placement({ dir: "/work/b" }),
      placement({ env: { HOME: "/home/v" } }),
      placement({ policy: { value: { bash: "deny" } } } as unknown as Partial<Placement>),
      placement({ acp: { name: "qwen", argv: ["qwen", "--acp"], sandbox: null } } as Partial<Placement>),
    ];
    for (const p of others) await (await pool.maker(p)(signal)).close?.();
    await (await pool.maker(placement())(signal)).close?.();
    expect(made).toHaveLength(5);
    await pool.close();
    expect(made.every((m) => m.closed === 1)).toBe(true);
  });

  it("in a sandbox or on an --ssh host: an agent per task, ended with it", async () => {
    const { pool, made } = fakePool();
    const sandboxed = placement({ sandbox: {} } as Partial<Placement>);
    const remote = placement({ ssh: {} } as Partial<Placement>);
    for (const p of [sandboxed, sandboxed, remote, remote]) await (await pool.maker(p)(signal)).close?.();
    expect(made.map((m) => m.closed)).toEqual([1, 1, 1, 1]);
    await pool.close();
    expect(made.map((m) => m.closed)).toEqual([1, 1, 1, 1]);
  });

  it("a task that ends after the pool closed ends its agent", async () => {
    const { pool, made } = fakePool();
    const running = await pool.maker(placement())(signal);
    await pool.close();
    expect(made[0]!.closed).toBe(0);
    await running.close?.();
    expect(made[0]!.closed).toBe(1);
  });
});
