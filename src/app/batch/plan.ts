// A batch's tasks with their options resolved before anything runs, through the one resolver (the
// single turn's), each option named as the user wrote it: a task's own field (`max_cost_usd`) when
// its line sets it, else the batch flag that gave the default (`--task-max-cost-usd`). A task whose
// options do not resolve is a problem of the tasks file: the batch does not run (exit 5).
import { posix, resolve } from "node:path";
import { ConfigError } from "../../domain/outcome/errors.js";
import type { OptionLabels } from "../../domain/outcome/labels.js";
import type { RunTurnOptions } from "../../plan/options.js";
import {
  type ResolvedTurn,
  resolveTurnOptions,
  resolveWholeLimits,
  type WholeLimits,
} from "../../plan/resolve-options.js";
import type { SandboxSpec } from "../../plan/sandbox-spec.js";
import type { SshSpec } from "../../plan/ssh-spec.js";
import { notADirectory, notAFile } from "../../sys/fs-checks.js";
import type { PlannedTask } from "./run-batch.js";
import { localPaths, taskLabels, taskOptions } from "./task-fields.js";
import type { Task } from "./tasks.js";

/** What every task gets unless its line says otherwise, as the library's options. */
export type TaskDefaults = Omit<RunTurnOptions, "prompt"> & { dir: string };

/**
 * A task's workspace: its own `dir`, taken from the batch's --dir when relative (a tasks file of
 * `packages/a`, `packages/b` runs against whichever checkout --dir names), else --dir itself.
 */
const workspaceOf = (task: Task, dir: string) => resolve(dir, task.dir ?? ".");

/**
 * A task on another host: its own `dir` is a path there, relative to the batch's --dir when the
 * batch runs on that host (batch --ssh), else to the login directory; without one, that --dir or
 * the login directory (undefined).
 */
function remoteWorkspaceOf(task: Task, base: string | undefined): string | undefined {
  if (task.dir === undefined) return base;
  return base === undefined || posix.isAbsolute(task.dir) ? task.dir : posix.join(base, task.dir);
}

/** Where tasks that name no host run: here, or on batch --ssh's host, in its --dir there. */
export type BatchHost = { ssh?: string; sshOptions?: string[]; dir?: string };

/** Whether a task may make more than one attempt: its own retry or fallback, else the batch's. */
const retries = (task: Task, defaults: TaskDefaults) =>
  (task.retry ?? defaults.retry ?? 0) > 0 || (task.fallback_model ?? defaults.fallbackModel) !== undefined;

export function planTasks(
  tasks: Task[],
  defaults: TaskDefaults,
  labels: OptionLabels,
  host: BatchHost = {},
): { run: PlannedTask[]; problems: { line: number; message: string }[] } {
  const run: PlannedTask[] = [];
  const problems: { line: number; message: string }[] = [];
  for (const task of tasks) {
    // A task's own host, else the batch's: its workspace and files are then paths there.
    const ssh = task.ssh ?? host.ssh;
    const dir =
      ssh === undefined
        ? workspaceOf(task, defaults.dir)
        : remoteWorkspaceOf(task, task.ssh === undefined || task.ssh === host.ssh ? host.dir : undefined);
    try {
      // A task's files are relative to its workspace, here or on its host.
      const paths = {
        file: (f: string) => (ssh === undefined ? resolve(dir!, f) : remoteFile(f, dir, ssh)),
        local: localPaths(dir),
      };
      const options = resolveTurnOptions(
        {
          ...defaults,
          ...taskOptions(task, paths),
          prompt: task.prompt,
          dir,
          ...(ssh === undefined ? {} : { ssh, sshOptions: host.sshOptions }),
          // The batch's waits between attempts are for the tasks that make more than one.
          ...(retries(task, defaults) ? {} : { retryDelayMs: undefined, retryMaxDelayMs: undefined }),
          // A task that turns the batch's checks off ([]) takes none of their limits either.
          ...(task.verify?.length === 0 ? { verifyTimeoutMs: undefined, verifyAttempts: undefined } : {}),
        },
        { labels: taskLabels(task, labels) },
      );
      // A workspace that is not there fails every turn in it: found now, before anything is paid for
      // (one on another host is checked there, when its server starts).
      const missing = options.placement.ssh ? null : notADirectory(options.placement.dir);
      if (missing) throw new ConfigError(`${options.placement.names.dir} ${options.placement.dir} ${missing}`);
      // So is a file the task attaches (a turn would find it only when its turn came).
      for (const path of options.placement.ssh ? [] : options.turn.files.paths) {
        const absent = notAFile(path);
        if (absent) throw new ConfigError(`${options.turn.files.option} ${path} ${absent}`);
      }
      run.push({ task, options });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push({ line: task.line, message: error.message });
    }
  }
  return { run, problems };
}

/**
 * A task's file on its host: relative to its workspace there. A server there is sent the path as
 * it is, so it must come out absolute: a login-relative one would be read on this machine.
 */
function remoteFile(file: string, dir: string | undefined, ssh: string): string {
  const path = posix.isAbsolute(file) || dir === undefined ? file : posix.join(dir, file);
  if (!posix.isAbsolute(path))
    throw new ConfigError(
      `files: ${JSON.stringify(file)} on ${ssh} needs an absolute path there (or the task an absolute dir)`,
    );
  return path;
}

/**
 * Tasks that one server can run: the same host and workspace there (or this machine), the same
 * sandbox policy (or none), and the models they use.
 */
export type ServerGroup = {
  sandbox: SandboxSpec | null;
  ssh: SshSpec | null;
  models: (string | null)[];
  tasks: PlannedTask[];
};

/**
 * The batch's tasks by server, in the order each first appears: one server has one filesystem
 * view and one proxy, and runs on one host in one directory, so each distinct sandbox policy and
 * each host and directory gets a server of its own.
 */
export function serverGroups(run: PlannedTask[]): ServerGroup[] {
  const groups = new Map<string, ServerGroup>();
  for (const planned of run) {
    const spec = planned.options.placement.sandbox;
    const ssh = planned.options.placement.ssh;
    const key = JSON.stringify([
      spec
        ? [
            spec.mode,
            [...spec.writable].sort(),
            [...spec.readable].sort(),
            [...spec.allowHosts].sort(),
            [...spec.passEnv].sort(),
          ]
        : "off",
      ssh ? [ssh.destination, ssh.dir] : "here",
    ]);
    const group = groups.get(key) ?? { sandbox: spec, ssh, models: [], tasks: [] };
    groups.set(key, group);
    group.tasks.push(planned);
    for (const model of [
      planned.options.turn.model ?? null,
      ...(planned.options.turn.fallbackModel ? [planned.options.turn.fallbackModel] : []),
    ])
      if (!group.models.includes(model)) group.models.push(model);
  }
  return [...groups.values()];
}

/** The batch's own budgets (--max-cost-usd, --max-tokens), before the plan resolves them. */
export type BatchBudgets = { maxCostUsd?: number; maxTokens?: number };
/** How the caller names the batch's own limits (the tasks' are named in `names.tasks`). */
type WholeNames = Parameters<typeof resolveWholeLimits>[2];

/**
 * The whole batch, planned before anything runs: its own limits; its defaults checked as one turn's
 * (a bad flag is a usage error of the batch, named by the flag that gave it); each task to run
 * resolved (planTasks). A ConfigError is the batch's; a task's problem is in `planned.problems`.
 */
export function planBatch(
  tasks: Task[],
  skipped: ReadonlyMap<string, unknown>,
  defaults: TaskDefaults,
  host: BatchHost,
  budgets: BatchBudgets,
  names: { batch: WholeNames; tasks: OptionLabels },
): { limits: WholeLimits; checked: ResolvedTurn; planned: ReturnType<typeof planTasks> } {
  const labels = names.tasks;
  const limits = resolveWholeLimits("batch", budgets, names.batch);
  // --retry-delay serves the tasks that retry (their own retry, or --retry): a flag for none is idle.
  const anyRetries = tasks.some((t) => retries(t, defaults));
  if (!anyRetries && (defaults.retryDelayMs !== undefined || defaults.retryMaxDelayMs !== undefined))
    throw new ConfigError(
      `${defaults.retryDelayMs !== undefined ? labels.retryDelayMs : labels.retryMaxDelayMs} needs ${labels.retry} (or a task's retry): without another attempt it would do nothing`,
      "UsageError",
    );
  // batch --ssh: its destination, options and --dir (a path there) are checked as a turn's are.
  const remoteTasks = tasks.filter((t) => t.ssh !== undefined);
  if (defaults.attach !== undefined && (host.ssh !== undefined || remoteTasks.length > 0))
    throw new ConfigError(
      `${host.ssh !== undefined ? `batch ${labels.ssh}` : `task ${remoteTasks[0]!.id} names an ssh host: that`} cannot be combined with ${labels.attach} (every task runs on the one server it names)`,
      "UsageError",
    );
  const checked = resolveTurnOptions(
    {
      ...defaults,
      ...(host.ssh !== undefined
        ? { ssh: host.ssh, sshOptions: host.sshOptions, dir: host.dir }
        : remoteTasks.length > 0
          ? {}
          : { sshOptions: host.sshOptions }),
      ...((defaults.retry ?? 0) > 0 || defaults.fallbackModel !== undefined
        ? {}
        : { retryDelayMs: undefined, retryMaxDelayMs: undefined }),
    },
    { labels },
  );
  const planned = planTasks(
    tasks.filter((t) => !skipped.has(t.id)),
    defaults,
    labels,
    host,
  );
  return { limits, checked, planned };
}
