// A batch from its files' text to what runs: the shard's tasks, what --resume skips and carries,
// the plan (plan.ts), and the backends the tasks run on (hosts/batch-servers.ts). The CLI reads the
// files and delivers the run; everything between is here, so a batch is planned the same way for
// every caller; a task through an ACP agent gets an agent from the batch's pool. A ConfigError is the batch's own (exit 5); the tasks file's problems come back
// as lines.
import type { BatchResult, OcEvent, TaskOutcome } from "../../contract/schema.js";
import { ConfigError } from "../../domain/outcome/errors.js";
import type { Backend, BackendMaker } from "../../engine/backend.js";
import { makeAgentPool } from "../../hosts/agent-pool.js";
import { type BatchServers, type BatchServersProblem, makeBatchServers } from "../../hosts/batch-servers.js";
import type { ResolvedTurn, WholeLimits } from "../../plan/resolve-options.js";
import { type BatchBudgets, type BatchHost, planBatch, serverGroups, type TaskDefaults } from "./plan.js";
import { carriedEvents, resumeProblem, succeededIn, tasksToSkip } from "./resume.js";
import type { PlannedTask } from "./run-batch.js";
import { parseTasks, shardOf, type Task } from "./tasks.js";

export type BatchInput = {
  /** The tasks file, as the caller named it (problems are `file:line: ...`), and its text. */
  tasks: { file: string; text: string };
  shard: BatchResult["shard"];
  /** The stream of an earlier run (--resume), as named and read by the caller, or null. */
  resume: { file: string; text: string } | null;
  defaults: TaskDefaults;
  host: BatchHost;
  budgets: BatchBudgets;
  names: Parameters<typeof planBatch>[5];
};

export type PreparedBatch = {
  /** Every task of the file (or shard), in order. */
  tasks: Task[];
  skipped: Map<string, TaskOutcome>;
  /** Tasks whose line changed since the --resume stream: they run again. */
  changed: string[];
  carried: OcEvent[];
  limits: WholeLimits;
  checked: ResolvedTurn;
  run: PlannedTask[];
  /** The tasks file's problems, each `file:line: message`, in line order: the batch does not run. */
  problems: string[];
};

export function prepareBatch(input: BatchInput): PreparedBatch {
  // Lines that do not parse are reported with the problems of those that do (a max_steps of 0, a
  // missing dir or file), all at once: one fix, one run, not one problem per attempt.
  const parsed = parseTasks(input.tasks.text);
  const { shard, resume } = input;
  const tasks = shard ? parsed.tasks.filter((t) => shardOf(t.id, shard.count) === shard.index) : parsed.tasks;
  const resumeText = resume?.text ?? "";
  const wrong = resume ? resumeProblem(resume.text, resume.file, parsed.tasks) : null;
  if (wrong) throw new ConfigError(wrong);
  const { skipped, changed } = tasksToSkip(succeededIn(resumeText), tasks);
  const { limits, checked, planned } = planBatch(
    tasks,
    skipped,
    input.defaults,
    input.host,
    input.budgets,
    input.names,
  );
  const problems = [...parsed.problems, ...planned.problems]
    .sort((a, b) => a.line - b.line)
    .map((p) => `${input.tasks.file}:${p.line}: ${p.message}`);
  return {
    tasks,
    skipped,
    changed,
    carried: carriedEvents(resumeText, new Set(skipped.keys())),
    limits,
    checked,
    run: planned.run,
    problems,
  };
}

/**
 * The batch's backends, made once: the caller's server (--attach) for every task, or the batch's
 * own, one per distinct sandbox policy and host of its tasks.
 */
export async function batchBackends(
  batch: PreparedBatch,
  given: { attach: string | null; opencode: string | null },
  env: NodeJS.ProcessEnv,
): Promise<BatchBackends | BatchServersProblem> {
  const onServers = batch.run.filter((t) => t.options.placement.acp === null);
  const groups =
    onServers.length === 0
      ? []
      : given.attach
        ? [{ sandbox: batch.checked.placement.sandbox, ssh: null, models: [], tasks: onServers }]
        : serverGroups(onServers);
  const servers = await makeBatchServers({ ...given, checked: batch.checked, groups }, env);
  if ("problem" in servers) return servers;
  const backendOf = new Map<PlannedTask, Backend | BackendMaker>(servers.backendOf);
  // A task through an ACP agent gets one as it starts: an idle one the batch started for the same
  // placement, or a new one (hosts/agent-pool.ts). An agent serves one prompt at a time, and tasks
  // run side by side.
  const agents = makeAgentPool();
  for (const task of batch.run) {
    const { placement } = task.options;
    if (placement.acp !== null) backendOf.set(task, agents.maker({ ...placement, acp: placement.acp }));
  }
  const stop = async () => {
    try {
      await agents.close();
    } finally {
      await servers.stop();
    }
  };
  return { ...servers, backendOf, stop };
}

export type BatchBackends = Omit<BatchServers<PlannedTask>, "backendOf"> & {
  backendOf: Map<PlannedTask, Backend | BackendMaker>;
};
