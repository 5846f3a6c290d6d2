// `oc-exec batch TASKS.jsonl`: flags in, the files read (the tasks, --resume's stream), the batch
// prepared and its backends made by the app (app/batch/prepare.ts: the plan, what --resume skips,
// its servers), the run delivered (app/batch/run-batch.ts), progress and the step summary on the
// side (progress/). stdout: one JSONL stream ending with one batch.result.
//
// Exit status: 0 every task succeeded; 1 the batch ran and some task did not succeed (each task's
// class is in the summary); 6 the batch budget stopped it; 130/143 a signal stopped it; 5 the
// batch itself could not run (a malformed tasks file, bad flags, no server), and then nothing ran.

import { readFileSync, realpathSync } from "node:fs";
import { cpus } from "node:os";
import { resolve } from "node:path";
import { batchBackends, prepareBatch } from "../app/batch/prepare.js";
import { runBatch } from "../app/batch/run-batch.js";
import { writeBatchNotRun } from "../app/batch/summary.js";
import { parseShard } from "../app/batch/tasks.js";
import { rehearsalRefused } from "../app/rehearse.js";
import { BROKEN_PIPE_EXIT } from "../contract/exit-codes.js";
import type { BatchResult } from "../contract/schema.js";
import { bugMessage, ConfigError, errorText } from "../domain/outcome/errors.js";
import { capProblems, printableLine } from "../domain/output/printable.js";
import { createStdoutWriter } from "../domain/output/stdout-writer.js";
import { batchEndLine, createBatchProgress } from "../domain/progress/batch-progress.js";
import { writeBatchStepSummary } from "../domain/progress/step-summary.js";
import { openRunReport, type RunReport, writeRunReport } from "../domain/reports/run-report.js";
import type { RunTurnOptions } from "../plan/options.js";
import { deliver } from "./deliver.js";
import { parseAmount, parseBudgetCount, parseCount } from "./duration.js";
import { type TableFlags, tableOptions } from "./flag-table.js";
import { TASK_FLAG_LABELS, type WorkFlags, workOptions } from "./flags.js";
import type { CliIo } from "./io.js";
import { type LimitFlags, limitOptions } from "./limit-flags.js";
import { stdoutFile } from "./stdout-file.js";

export type BatchFlags = TableFlags<
  "attach" | "acp" | "ssh" | "sshOption" | "dir" | "model" | "agent" | "allow" | "deny" | "opencode"
> & {
  junit?: string;
  concurrency?: string;
  auto?: boolean;
  maxCostUsd?: string;
  maxTokens?: string;
  resume?: string;
  shard?: string;
  quiet?: boolean;
} & WorkFlags &
  LimitFlags<"task-">;

/**
 * Default concurrency: twice the cores, from 2 to 8. A turn mostly waits on the model; what the
 * cores do is the one server's work (tools, edits) and oc-exec's own parsing, and beyond about two
 * turns a core they only queue behind each other.
 */
const defaultConcurrency = () => Math.min(8, Math.max(2, cpus().length * 2));

export const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message;

/** Writes the batch.result of a batch that could not run, and its step summary; returns 5. */
export async function batchNotRun(
  problems: string[],
  shard: BatchResult["shard"],
  io: Pick<CliIo, "env" | "stderr" | "stdout">,
  report: RunReport | null = null,
  stop: "internal_error" | null = null,
): Promise<number> {
  const writer = createStdoutWriter(io.stdout);
  const summary = writeBatchNotRun(
    capProblems(problems),
    shard,
    (event) => {
      report?.observe(event);
      writer.write(event);
    },
    stop,
  );
  await writer.drained();
  const refused = await writeReport(report, io);
  writeBatchStepSummary(io.env, sayer(io, "batch"), summary, io.stderr);
  return refused ?? summary.exit_code;
}

export const sayer = (io: Pick<CliIo, "stderr">, command: string) => (text: string) =>
  io.stderr.write(`oc-exec ${command}: ${printableLine(text)}\n`);

/**
 * Writes the reports (--junit, a trace) once the stream's last line is out; a failure is said on
 * stderr. Returns the exit status that replaces the run's own when a report was refused as unsafe.
 */
export function writeReport(report: RunReport | null, io: Pick<CliIo, "stderr">): Promise<number | null> {
  return writeRunReport(report, io.stderr);
}

export async function batchCommand(file: string, flags: BatchFlags, io: CliIo): Promise<number> {
  const shard = flags.shard === undefined ? null : parseShard(flags.shard);
  let report: RunReport | null = null;
  try {
    if (flags.shard !== undefined && !shard)
      throw new ConfigError(`--shard takes i/n with 1 <= i <= n, not ${JSON.stringify(flags.shard)}`);
    const refused = rehearsalRefused(io.env, "oc-exec batch");
    if (refused) throw new ConfigError(refused, "UsageError");
    // An unwritable report path stops the batch before any task runs.
    report = openRunReport({ junit: flags.junit ?? null, suiteName: "oc-exec batch", traces: true }, io.env, io.stderr);
    return await runBatchCommand(file, flags, shard, io, report);
  } catch (error) {
    if (!(error instanceof ConfigError)) {
      // A bug: the batch's stream still ends with its batch.result, exit 70, as a turn's does.
      const message = bugMessage(errorText(error));
      sayer(io, "batch")(message);
      return batchNotRun([message], shard, io, report, "internal_error");
    }
    sayer(io, "batch")(error.message);
    return batchNotRun([error.message], shard, io, report);
  }
}

async function runBatchCommand(
  file: string,
  flags: BatchFlags,
  shard: BatchResult["shard"],
  io: CliIo,
  report: RunReport | null,
): Promise<number> {
  const say = sayer(io, "batch");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read ${file}: ${errnoOf(error)}`);
  }
  const notRun = (problems: string[], summary: string) => {
    for (const p of capProblems(problems)) io.stderr.write(`${printableLine(p)}\n`);
    say(summary);
    return batchNotRun(problems, shard, io, report);
  };
  let resume: { file: string; text: string } | null = null;
  if (flags.resume) {
    // `--resume batch.jsonl > batch.jsonl`: the shell emptied the file before oc-exec started, and
    // an empty stream says nothing succeeded: every task would run, and be paid for, again.
    if (stdoutFile() === realpathOr(flags.resume))
      throw new ConfigError(
        `--resume ${flags.resume} is also this batch's stdout: the shell empties it for > before oc-exec can read what succeeded (and >> would mix the two streams); write the new stream to another file, e.g. > batch-2.jsonl; nothing was run`,
      );
    try {
      resume = { file: flags.resume, text: readFileSync(flags.resume, "utf8") };
    } catch (error) {
      throw new ConfigError(`--resume ${flags.resume}: ${errnoOf(error)}`);
    }
  }
  const concurrency =
    flags.concurrency === undefined ? defaultConcurrency() : parseCount(flags.concurrency, "--concurrency", { min: 1 });
  const budgetCount = (v: string | undefined, flag: string) =>
    v === undefined ? undefined : parseBudgetCount(v, flag);
  const amount = (v: string | undefined, flag: string) => (v === undefined ? undefined : parseAmount(v, flag));
  const batch = prepareBatch({
    tasks: { file, text },
    shard,
    resume,
    defaults: {
      env: io.env,
      ...tableOptions(flags, ["attach", "acp", "model", "agent", "allow", "deny"]),
      dir: resolve(flags.dir ?? "."),
      auto: flags.auto,
      ...limitOptions(flags, "task-"),
      // The sandbox of tasks that name none: their server's, which their tools run in.
      sandbox: flags.sandbox as RunTurnOptions["sandbox"],
      ...workOptions(flags),
    },
    host: { ssh: flags.ssh, sshOptions: flags.sshOption, dir: flags.dir },
    budgets: {
      maxCostUsd: amount(flags.maxCostUsd, "--max-cost-usd"),
      maxTokens: budgetCount(flags.maxTokens, "--max-tokens"),
    },
    names: {
      batch: { steps: "--max-steps", tokens: "--max-tokens", cost_usd: "--max-cost-usd", timeout: "--timeout" },
      tasks: TASK_FLAG_LABELS,
    },
  });
  if (!flags.quiet)
    for (const id of batch.changed)
      say(`task ${id} changed since the --resume stream (its line differs): it runs again`);
  if (batch.problems.length > 0)
    return notRun(batch.problems, `${batch.problems.length} problem(s) in the tasks file; nothing was run`);

  const servers = await batchBackends(
    batch,
    { attach: flags.attach ?? null, opencode: flags.opencode ?? null },
    io.env,
  );
  if ("problem" in servers) {
    const { kind, message } = servers.problem;
    if (kind === "config") throw new ConfigError(message);
    if (kind === "unusable")
      return notRun(
        [message],
        `the batch cannot use its server (${flags.attach ?? "one it started"}); nothing was run`,
      );
    const problem = `could not start an opencode server: ${message}; nothing was run`;
    say(problem);
    return batchNotRun([problem], shard, io, report);
  }
  const { backendOf } = servers;
  const { tasks, skipped } = batch;

  const progress = createBatchProgress(io.stderr, io.env, flags.quiet ?? false, tasks.length, skipped.size);
  let summary: BatchResult;
  try {
    const exit = await deliver(
      async (sink, control) => {
        summary = await runBatch(
          {
            tasks,
            run: batch.run.map((task) => ({ ...task, backend: backendOf.get(task) })),
            skipped,
            carried: batch.carried,
            backend: servers.first,
            concurrency,
            limits: batch.limits,
            shard,
          },
          {
            write: sink,
            started: (task) => progress.started(task.id),
            finished: (task, result, run) => progress.finished(task.id, result, run),
          },
          control,
        );
        return summary;
      },
      io,
      {
        event: (event) => report?.observe(event),
        signal: (_reason, signal) => progress.note(`received ${signal}: stopping the running tasks`),
      },
    );
    const refused = await writeReport(report, io);
    progress.stop();
    if (!flags.quiet)
      say(
        exit === BROKEN_PIPE_EXIT
          ? `stdout was closed by its reader: the batch was stopped; exit ${BROKEN_PIPE_EXIT}`
          : batchEndLine(summary!),
      );
    writeBatchStepSummary(io.env, say, summary!, io.stderr);
    return refused ?? exit;
  } finally {
    progress.stop();
    await servers.stop();
  }
}

/** Where a path leads, or the path itself when it does not exist. */
function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
