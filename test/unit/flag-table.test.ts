// The option flags' one table: every flag in it is one commander's program has, under the field the
// table reads, taking a value exactly when its parser takes one; the names messages give options
// come from it; and a turn's, a batch's and a server's flags are converted by it alike.
import { describe, expect, it } from "vitest";
import { planTasks } from "../../src/app/batch/plan.js";
import { TASK_FIELDS } from "../../src/app/batch/task-fields.js";
import { parseTasks } from "../../src/app/batch/tasks.js";

import {
  ALL_OPTION_FLAGS,
  FLAG_LABELS,
  OPTION_FLAGS,
  SANDBOX_FLAGS,
  type TableFlags,
  tableOptions,
} from "../../src/cli/flag-table.js";
import { optionsFromFlags, TASK_FLAG_LABELS } from "../../src/cli/flags.js";
import { buildProgram } from "../../src/cli/program.js";

const quiet = { writeOut: () => {}, writeErr: () => {} };
const SWITCHES = new Set(["warm", "textDeltas", "continue", "fork", "pure", "ephemeral", "thinking", "includeRaw"]);

describe("the option flags' table", () => {
  const program = buildProgram(quiet);
  const byLong = new Map(program.options.map((o) => [o.long, o]));

  it("every flag is the turn's, under the field the table reads, a switch exactly where the table says", () => {
    for (const key of ALL_OPTION_FLAGS) {
      const { flag } = OPTION_FLAGS[key];
      const option = byLong.get(flag);
      expect(option, flag).toBeDefined();
      expect(option!.attributeName(), flag).toBe(key);
      expect(option!.required || option!.optional, flag).toBe(!SWITCHES.has(key));
    }
  });

  it("batch and server start declare the flags they read from it", () => {
    const sub = (name: string) => program.commands.find((c) => c.name() === name)!;
    const batch = new Set(sub("batch").options.map((o) => o.long));
    for (const key of ["attach", "model", "agent", "allow", "deny", ...SANDBOX_FLAGS, "verify", "retry"] as const)
      expect(batch).toContain(OPTION_FLAGS[key].flag);
    const start = sub("server").commands.find((c) => c.name() === "start")!;
    const server = new Set(start.options.map((o) => o.long));
    for (const key of SANDBOX_FLAGS) expect(server).toContain(OPTION_FLAGS[key].flag);
  });

  it("names every option as the user typed it", () => {
    expect(FLAG_LABELS).toMatchObject({
      dir: "--dir",
      files: "--file",
      config: "--config/--mcp",
      outputLastMessage: "--output-last-message",
      allowHosts: "--allow-host",
      sshOptions: "--ssh-option",
      startupTimeoutMs: "--startup-timeout",
      verifyTimeoutMs: "--verify-timeout",
      retryMaxDelayMs: "--retry-max-delay",
      timeoutMs: "--timeout",
      maxCostUsd: "--max-cost-usd",
      sandbox: "--sandbox",
      auto: "--auto",
      rehearse: "--rehearse",
      acp: "--acp",
    });
  });

  it("converts only the flags given, each by its parser, a bad value named by its flag", () => {
    expect(
      tableOptions({ allowHost: ["a.example,b.example"], passEnv: ["CI"], writable: ["out"] }, SANDBOX_FLAGS),
    ).toEqual({ allowHosts: ["a.example", "b.example"], passEnv: ["CI"], writable: ["out"] });
    const both: TableFlags = { dir: "x", model: "a/b" };
    expect(tableOptions(both, ["model"])).toEqual({ model: "a/b" });
    expect(() => tableOptions({ retryDelay: "later" }, ["retryDelay"])).toThrow(
      '--retry-delay takes a duration like 1500ms, 90s or 5m, not "later"',
    );
    const { options } = optionsFromFlags(
      { file: ["a.md"], allow: ["read,grep", "bash"], failOn: ["no-changes"], fullAuto: true, killAfter: "2s" },
      [],
    );
    expect(options).toMatchObject({
      files: ["a.md"],
      allow: ["read", "grep", "bash"],
      failOn: ["no-changes"],
      sandbox: "workspace-write",
      auto: true,
      killAfterMs: 2000,
    });
    expect(Object.values(options).filter((v) => v !== undefined)).toHaveLength(6);
  });

  it("a task line's fields set the options the turn's flags set, and name them as the line does", () => {
    const turnOptions = new Set<string>([
      ...Object.values(OPTION_FLAGS).map((e) => e.option),
      ...Object.keys(FLAG_LABELS),
    ]);
    for (const [field, { option }] of Object.entries(TASK_FIELDS)) expect(turnOptions, field).toContain(option);
    const { tasks } = parseTasks(
      [
        { id: "a", prompt: "x", model: "gpt4" },
        { id: "b", prompt: "x", max_cost_usd: 1, timeout: "90s", allow: ["read"] },
        { id: "c", prompt: "x" },
      ]
        .map((t) => JSON.stringify(t))
        .join("\n"),
    );
    const planned = planTasks(tasks, { dir: process.cwd(), model: "batch/default", retry: 2 }, TASK_FLAG_LABELS);
    expect(planned.problems).toEqual([
      {
        line: 1,
        message: 'model takes provider/model (e.g. anthropic/claude-sonnet-4-5, openai/gpt-4.1), not "gpt4"',
      },
    ]);
    const [b, c] = planned.run.map((r) => r.options);
    expect(b!.turn).toMatchObject({
      model: "batch/default",
      allow: ["read"],
      timeout: { ms: 90_000, option: "timeout" },
      budgets: { limits: { cost_usd: 1 }, names: { cost_usd: "max_cost_usd" } },
      retry: 2,
    });
    expect(c!.turn.budgets.names.cost_usd).toBe(TASK_FLAG_LABELS.maxCostUsd);
  });
});
