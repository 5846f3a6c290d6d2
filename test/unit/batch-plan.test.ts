// A batch planned before anything runs (app/batch/plan.ts planBatch): its own limits named by the
// batch's flags, its defaults checked as one turn's, and the refusals that stop it whole, each in
// the words the user typed.
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { planBatch } from "../../src/app/batch/plan.js";
import { parseTasks } from "../../src/app/batch/tasks.js";
import { TASK_FLAG_LABELS } from "../../src/cli/flags.js";

const names = {
  batch: { steps: "--max-steps", tokens: "--max-tokens", cost_usd: "--max-cost-usd", timeout: "--timeout" },
  tasks: TASK_FLAG_LABELS,
};
const tasksOf = (...lines: object[]) => parseTasks(lines.map((l) => JSON.stringify(l)).join("\n")).tasks;
const dir = tmpdir();

describe("planBatch", () => {
  it("the batch's own budgets are named by its flags, the tasks' defaults by --task-*", () => {
    const { limits, planned } = planBatch(
      tasksOf({ id: "a", prompt: "x" }, { id: "b", prompt: "y", max_steps: 0 }),
      new Map(),
      { env: {}, dir },
      {},
      { maxCostUsd: 2 },
      names,
    );
    expect(limits.budgets).toEqual({
      limits: { steps: null, tokens: null, cost_usd: 2 },
      names: { steps: "--max-steps", tokens: "--max-tokens", cost_usd: "--max-cost-usd" },
    });
    expect(planned.run.map((p) => p.task.id)).toEqual(["a"]);
    expect(planned.problems).toEqual([
      {
        line: 2,
        message:
          "max_steps must be more than 0: a budget of 0 would stop the work before it starts (leave it out for no limit)",
      },
    ]);
    // A default every task would take is the batch's problem, named by the flag that gave it.
    expect(() =>
      planBatch(tasksOf({ id: "a", prompt: "x" }), new Map(), { env: {}, dir, maxSteps: 0 }, {}, {}, names),
    ).toThrow("--task-max-steps must be more than 0");
  });

  it("refuses, whole and before anything runs, what the batch's flags cannot mean", () => {
    const plan = (defaults: object, host = {}, tasks = tasksOf({ id: "a", prompt: "x" })) =>
      planBatch(tasks, new Map(), { env: {}, dir, ...defaults }, host, {}, names);
    expect(() => plan({ retryDelayMs: 1000 })).toThrow(
      "--retry-delay needs --retry (or a task's retry): without another attempt it would do nothing",
    );
    expect(plan({ retryDelayMs: 1000 }, {}, tasksOf({ id: "a", prompt: "x", retry: 1 })).planned.run).toHaveLength(1);
    expect(() => plan({ attach: "http://127.0.0.1:1" }, { ssh: "build-box" })).toThrow(
      "batch --ssh cannot be combined with --attach (every task runs on the one server it names)",
    );
    expect(() =>
      plan({ attach: "http://127.0.0.1:1" }, {}, tasksOf({ id: "far", prompt: "x", ssh: "build-box" })),
    ).toThrow("task far names an ssh host: that cannot be combined with --attach");
  });

  it("tasks through an ACP agent: OC_EXEC_ACP, --acp or a task's own acp; what cannot go with one is the task's problem", () => {
    const tasks = tasksOf(
      { id: "env", prompt: "x" },
      { id: "own", prompt: "x", acp: "qwen" },
      { id: "far", prompt: "x", acp: "claude", ssh: "build-box" },
    );
    const byEnv = planBatch(tasks, new Map(), { env: { OC_EXEC_ACP: "gemini" }, dir }, {}, {}, names).planned;
    const where = (p: (typeof byEnv.run)[number]) => [
      p.task.id,
      p.options.placement.acp?.name,
      p.options.placement.acp?.argv,
      p.options.placement.ssh?.destination,
    ];
    expect(byEnv.run.map(where)).toEqual([
      ["env", "gemini", ["gemini", "--acp"], undefined],
      ["own", "qwen", ["qwen", "--acp"], undefined],
      // On its host: the agent runs there.
      ["far", "claude", ["claude-agent-acp"], "build-box"],
    ]);
    expect(byEnv.problems).toEqual([]);
    // Every task on the one server --attach names: an agent of a task's own cannot be that.
    const attached = planBatch(
      tasks.slice(1, 2),
      new Map(),
      { env: {}, dir, attach: "http://127.0.0.1:1" },
      {},
      {},
      names,
    ).planned;
    expect(attached.problems).toEqual([
      { line: 2, message: "acp runs the turn through an agent started for it; it cannot go with --attach" },
    ]);
    const byFlag = planBatch(tasks.slice(0, 2), new Map(), { env: {}, dir, acp: "opencode" }, {}, {}, names);
    expect(byFlag.planned.run.map((p) => p.options.placement.acp?.name)).toEqual(["opencode", "qwen"]);
    expect(byFlag.checked.placement.acp?.name).toBe("opencode");
    expect(
      planBatch(tasks.slice(0, 1), new Map(), { env: {}, dir }, {}, {}, names).planned.run[0]!.options.placement.acp,
    ).toBeNull();
  });

  it("plans only the tasks --resume does not skip", () => {
    const { planned } = planBatch(
      tasksOf({ id: "done", prompt: "x" }, { id: "todo", prompt: "y" }),
      new Map([["done", true]]),
      { env: {}, dir },
      {},
      {},
      names,
    );
    expect(planned.run.map((p) => p.task.id)).toEqual(["todo"]);
  });
});
