// A task line's fields, one table: each field with the library option it sets and how its value
// becomes the option's (paths relative to the task's workspace). The task's options and the names
// its messages give them (`max_cost_usd`, not the batch's --task-max-cost-usd) both read it;
// test/unit/flag-table.test.ts holds each option to the flag that sets it on a turn.
import { resolve } from "node:path";
import type { OptionLabels } from "../../domain/outcome/labels.js";
import type { RunTurnOptions } from "../../plan/options.js";
import type { Task } from "./tasks.js";

/** Where a task's relative paths lead: its workspace, here or on its host. */
export type TaskPaths = { file: (path: string) => string; local: (path: string) => string };

type TaskOption = keyof RunTurnOptions;
type Field<F extends keyof Task> = {
  option: TaskOption;
  /** The option's value from the field's; without it, the field's value as it is. */
  value?: (given: NonNullable<Task[F]>, task: Task, at: TaskPaths) => unknown;
};

/**
 * The task fields that set an option; `dir` and `ssh` say where the task runs (plan.ts) and are here
 * for their names only.
 */
export const TASK_FIELDS = {
  dir: { option: "dir" },
  ssh: { option: "ssh" },
  acp: { option: "acp" },
  model: { option: "model" },
  agent: { option: "agent" },
  variant: { option: "variant" },
  allow: { option: "allow" },
  deny: { option: "deny" },
  auto: { option: "auto" },
  // A task's files, writable and readable paths are relative to its workspace, like its dir.
  files: { option: "files", value: (files, _, at) => files.map(at.file) },
  max_steps: { option: "maxSteps" },
  max_tokens: { option: "maxTokens" },
  max_cost_usd: { option: "maxCostUsd" },
  // Parsed with the line (tasks.ts): a bad duration is a problem of the tasks file.
  timeout: { option: "timeoutMs", value: (_, task) => task.timeoutMs },
  sandbox: { option: "sandbox" },
  writable: { option: "writable", value: (paths, _, at) => paths.map(at.local) },
  readable: { option: "readable", value: (paths, _, at) => paths.map(at.local) },
  allow_hosts: { option: "allowHosts" },
  verify: { option: "verify" },
  retry: { option: "retry" },
  fallback_model: { option: "fallbackModel" },
} as const satisfies { [F in keyof Task]?: Field<F> };

type TaskField = keyof typeof TASK_FIELDS;
const FIELDS = Object.keys(TASK_FIELDS) as TaskField[];
const entryOf = (name: TaskField) => TASK_FIELDS[name] as Field<TaskField>;

/** The options the task's own line sets (where and on which host are plan.ts's). */
export function taskOptions(task: Task, paths: TaskPaths): Partial<RunTurnOptions> {
  const options: Record<string, unknown> = {};
  for (const name of FIELDS) {
    if (name === "dir" || name === "ssh") continue;
    const given = task[name];
    if (given === undefined) continue;
    const { option, value } = entryOf(name);
    options[option] = value ? value(given as never, task, paths) : given;
  }
  return options as Partial<RunTurnOptions>;
}

/** The labels for one task: its own fields where its line sets them, else the batch's. */
export function taskLabels(task: Task, batch: OptionLabels): OptionLabels {
  const labels = { ...batch };
  // (A field whose option no message names, such as variant, adds a name nothing reads.)
  for (const name of FIELDS)
    if (task[name] !== undefined) (labels as Record<string, string>)[entryOf(name).option] = name;
  return labels;
}

/** The workspace-relative paths of a task here; files on another host are resolved by the plan. */
export const localPaths =
  (dir: string | undefined): TaskPaths["local"] =>
  (p) =>
    resolve(dir ?? ".", p);
