// `oc-exec batch TASKS.jsonl` and `oc-exec merge SHARD.jsonl...`. stdout: one JSONL stream, every
// event marked with its task id, each task ending with its result, the batch ending with one
// batch.result. stderr: a live line in a terminal (ora), one plain line per finished task in a CI
// log, and under GitHub Actions the summary table in $GITHUB_STEP_SUMMARY.
//
// Exit status: 0 every task succeeded; 1 the batch ran and some task did not succeed (each task's
// class is in the summary); 6 the batch budget stopped it; 130/143 a signal stopped it; 5 the
// batch itself could not run (a malformed tasks file, bad flags, no server), and then nothing ran.
import { appendFileSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { resolve } from "node:path";
import type { BatchResult, OcEvent, ResultEvent, TaskOutcome } from "../contract/schema.js";
import { readEnvironment } from "../environment.js";
import { formatDuration } from "../duration.js";
import { splitList } from "../opencode/permissions.js";
import { locateOpencode } from "../opencode/locate.js";
import { detectOpencode } from "../opencode/version.js";
import { ConfigError } from "../outcome/errors.js";
import { createStdoutWriter } from "../output/stdout-writer.js";
import { type BatchPlan, runBatch } from "../batch/run-batch.js";
import { batchNotRun, batchResult } from "../batch/summary.js";
import { parseShard, parseTasks, shardOf, type Task } from "../batch/tasks.js";
import { startServer, stopServer } from "../server/managed.js";
import type { ManagedServer } from "../server/registry.js";
import type { Ora } from "ora";
import { canDrawLiveLine, createSpinner } from "../progress/spinner.js";
import { parseAmount, parseCount, parseDurationFlag } from "./duration.js";
import type { CliIo } from "./main.js";
import { addUsage, emptyUsage } from "../contract/usage.js";

export type BatchFlags = {
  attach?: string;
  concurrency?: string;
  dir?: string;
  model?: string;
  agent?: string;
  allow?: string[];
  deny?: string[];
  auto?: boolean;
  maxCostUsd?: string;
  maxTokens?: string;
  taskMaxCostUsd?: string;
  taskMaxTokens?: string;
  taskMaxSteps?: string;
  taskTimeout?: string;
  resume?: string;
  shard?: string;
  opencode?: string;
  quiet?: boolean;
};

/**
 * Default concurrency: twice the cores, from 2 to 8. A turn mostly waits on the model; what the
 * cores do is the one server's work (tools, edits) and oc-exec's own parsing, and beyond about two
 * turns a core they only queue behind each other.
 */
const defaultConcurrency = () => Math.min(8, Math.max(2, cpus().length * 2));

/** Tasks whose result in an earlier batch stream was success, with the digest of their line then. */
function succeededIn(file: string): Map<string, TaskOutcome> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`--resume ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const done = new Map<string, TaskOutcome>();
  for (const line of text.split("\n")) {
    if (!line.includes('"result"')) continue;
    try {
      const event = JSON.parse(line) as OcEvent;
      if (event.type === "result" && event.task_id !== undefined && event.class === "success")
        done.set(event.task_id, {
          id: event.task_id,
          class: "success",
          exit_code: 0,
          cost_usd: event.cost_usd,
          duration_ms: event.duration_ms,
          ...(event.task_digest === undefined ? {} : { digest: event.task_digest }),
          run: "skipped",
        });
      if (event.type === "batch.result")
        for (const t of event.tasks) if (t.class === "success") done.set(t.id, { ...t, run: "skipped" });
    } catch {
      // A line cut off by the interruption that made the re-run necessary.
    }
  }
  return done;
}

/**
 * Writes the batch.result of a batch that could not run, and its step summary; returns 5. The
 * problems are on stderr already.
 */
export async function writeBatchNotRun(
  problems: string[],
  shard: BatchResult["shard"],
  io: Pick<CliIo, "env" | "stderr">,
): Promise<number> {
  const summary = batchNotRun(problems, shard);
  const writer = createStdoutWriter();
  writer.write(summary);
  await writer.drained();
  writeStepSummary(io, summary);
  return summary.exit_code;
}

export async function batchCommand(file: string, flags: BatchFlags, io: CliIo): Promise<number> {
  const shard = flags.shard === undefined ? null : parseShard(flags.shard);
  try {
    if (flags.shard !== undefined && !shard)
      throw new ConfigError(`--shard takes i/n with 1 <= i <= n, not ${JSON.stringify(flags.shard)}`);
    return await runBatchCommand(file, flags, shard, io);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`oc-exec batch: ${error.message}\n`);
    return writeBatchNotRun([error.message], shard, io);
  }
}

async function runBatchCommand(
  file: string,
  flags: BatchFlags,
  shard: BatchResult["shard"],
  io: CliIo,
): Promise<number> {
  const say = (text: string) => io.stderr.write(`oc-exec batch: ${text}\n`);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const parsed = parseTasks(text);
  if (parsed.problems.length > 0) {
    const problems = parsed.problems.map((p) => `${file}:${p.line}: ${p.message}`);
    for (const p of problems) io.stderr.write(`${p}\n`);
    say(`${parsed.problems.length} problem(s) in the tasks file; nothing was run`);
    return writeBatchNotRun(problems, shard, io);
  }
  const tasks: Task[] = shard ? parsed.tasks.filter((t) => shardOf(t.id, shard.count) === shard.index) : parsed.tasks;
  const skipped = flags.resume ? succeededIn(flags.resume) : new Map<string, TaskOutcome>();
  for (const [id, before] of skipped) {
    const task = tasks.find((t) => t.id === id);
    // A stream from before digests were written has none: there the id alone decides.
    if (task && before.digest !== undefined && before.digest !== task.digest) {
      if (!flags.quiet) say(`task ${id} changed since the --resume stream (its line differs): it runs again`);
      skipped.delete(id);
    } else if (!task) skipped.delete(id);
  }
  const concurrency =
    flags.concurrency === undefined ? defaultConcurrency() : parseCount(flags.concurrency, "--concurrency", { min: 1 });
  const dir = resolve(flags.dir ?? ".");
  const count = (v: string | undefined, flag: string) => (v === undefined ? undefined : parseCount(v, flag));
  const plan: Omit<BatchPlan, "url"> = {
    tasks,
    skipped,
    env: io.env,
    concurrency,
    defaults: {
      dir,
      model: flags.model,
      agent: flags.agent,
      allow: flags.allow ? splitList(flags.allow) : undefined,
      deny: flags.deny ? splitList(flags.deny) : undefined,
      auto: flags.auto,
      maxSteps: count(flags.taskMaxSteps, "--task-max-steps"),
      maxTokens: count(flags.taskMaxTokens, "--task-max-tokens"),
      maxCostUsd:
        flags.taskMaxCostUsd === undefined ? undefined : parseAmount(flags.taskMaxCostUsd, "--task-max-cost-usd"),
      timeoutMs: flags.taskTimeout === undefined ? undefined : parseDurationFlag(flags.taskTimeout, "--task-timeout"),
    },
    budget: {
      maxCostUsd: flags.maxCostUsd === undefined ? null : parseAmount(flags.maxCostUsd, "--max-cost-usd"),
      maxTokens: flags.maxTokens === undefined ? null : parseCount(flags.maxTokens, "--max-tokens"),
    },
    shard,
  };
  let server: ManagedServer | null = null;
  const toRun = tasks.filter((t) => !skipped.has(t.id)).length;
  if (!flags.attach && toRun > 0) {
    const located = locateOpencode(flags.opencode ?? readEnvironment(io.env).opencode, io.env.PATH);
    if (!located.ok) throw new ConfigError(located.message);
    const detected = await detectOpencode(located.binary, io.env);
    try {
      // The batch stops its server itself; the idle time only guards against a batch that died.
      server = await startServer({
        binary: located.binary.path,
        version: detected.version,
        dir,
        idleTimeoutMs: 10 * 60_000,
        port: 0,
        env: io.env,
        self: [process.execPath, process.argv[1]!],
        startTimeoutMs: 60_000,
      });
    } catch (error) {
      const problem = `could not start an opencode server: ${(error as Error).message}; nothing was run`;
      say(problem);
      return writeBatchNotRun([problem], shard, io);
    }
  }
  const progress = createProgress(io, flags.quiet ?? false, tasks.length, skipped.size);
  const writer = createStdoutWriter();
  const batch = runBatch(
    { ...plan, url: flags.attach ?? server?.url ?? "" },
    {
      write: (event) => writer.write(event),
      started: progress.started,
      finished: progress.finished,
    },
  );
  const onSignal = (signal: NodeJS.Signals) => {
    progress.note(`received ${signal}: stopping the running tasks`);
    batch.stop(signal === "SIGINT" ? { kind: "interrupted", signal } : { kind: "terminated", signal });
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const s of signals) process.on(s, onSignal);
  let summary: BatchResult;
  try {
    summary = await batch.done;
  } finally {
    for (const s of signals) process.off(s, onSignal);
    if (server) await stopServer(io.env, server);
    progress.stop();
  }
  writer.write(summary);
  await writer.drained();
  writeSummary(io, summary);
  return summary.exit_code;
}

type Progress = {
  started(task: Task): void;
  finished(task: Task, result: ResultEvent, run: TaskOutcome["run"]): void;
  note(text: string): void;
  stop(): void;
};

/** In a terminal one live line (ora); elsewhere one plain line per finished task. */
function createProgress(io: CliIo, quiet: boolean, total: number, skipped: number): Progress {
  if (quiet) return { started() {}, finished() {}, note() {}, stop() {} };
  const running = new Set<string>();
  let done = skipped;
  let failed = 0;
  let cost = 0;
  const line = () =>
    `${done}/${total} done · ${running.size} running · ${failed} failed · $${cost.toFixed(4)}${running.size > 0 ? ` · ${[...running].slice(0, 4).join(", ")}${running.size > 4 ? ", …" : ""}` : ""}`;
  const plain = (text: string) => io.stderr.write(`${text}\n`);
  let spinner: Ora | null = null;
  // ora loads while the first tasks start; a batch that ends before it has loaded gets no spinner.
  let ended = false;
  if (skipped > 0) plain(`${skipped} task(s) skipped: they succeeded in the --resume stream`);
  if (canDrawLiveLine(io.stderr, io.env)) {
    void createSpinner(io.stderr).then((created) => {
      if (!ended) spinner = created.start(line());
    });
  }
  const print = (text: string) => {
    if (spinner) {
      spinner.clear();
      plain(text);
      spinner.text = line();
      spinner.render();
    } else plain(text);
  };
  return {
    started(task) {
      running.add(task.id);
      if (spinner) spinner.text = line();
    },
    finished(task, result, run) {
      running.delete(task.id);
      done++;
      cost += result.cost_usd;
      if (result.class !== "success") failed++;
      const why = result.error ? `: ${result.error.message.split("\n")[0]!.slice(0, 160)}` : "";
      print(
        `[${done}/${total}] ${task.id}: ${result.class} (${result.exit_code})${run === "not_run" ? " not run" : ""} ${formatDuration(result.duration_ms)} $${result.cost_usd.toFixed(4)}${why}`,
      );
    },
    note: (text) => print(text),
    stop() {
      ended = true;
      spinner?.stop();
    },
  };
}

const countsText = (summary: BatchResult) =>
  Object.entries(summary.counts)
    .map(([cls, n]) => `${n} ${cls}`)
    .join(", ");

/** The end of the stderr report, and the step summary under GitHub Actions. */
function writeSummary(io: CliIo, summary: BatchResult): void {
  io.stderr.write(
    `oc-exec batch: ${summary.tasks.length} task(s): ${countsText(summary) || "none run"}${summary.tasks.some((t) => t.run === "skipped") ? `, ${summary.tasks.filter((t) => t.run === "skipped").length} skipped` : ""}; $${summary.cost_usd.toFixed(4)}, ${summary.usage.total} tokens, ${formatDuration(summary.duration_ms)}; exit ${summary.exit_code}\n`,
  );
  writeStepSummary(io, summary);
}

/** Under GitHub Actions: the summary as a table in $GITHUB_STEP_SUMMARY. */
function writeStepSummary(io: Pick<CliIo, "env" | "stderr">, summary: BatchResult): void {
  const counts = countsText(summary);
  const file = io.env.GITHUB_STEP_SUMMARY;
  if (!file) return;
  const rows = summary.tasks.map(
    (t) =>
      `| ${t.id} | ${t.class} | ${t.exit_code} | ${t.run} | ${formatDuration(t.duration_ms)} | $${t.cost_usd.toFixed(4)} |`,
  );
  const markdown = [
    `### oc-exec batch${summary.shard ? ` (shard ${summary.shard.index}/${summary.shard.count})` : ""}: ${summary.ok ? "all tasks succeeded" : summary.tasks.length === 0 && summary.problems.length > 0 ? "the batch could not run" : "some tasks did not succeed"}`,
    "",
    `${counts || "no task ran"} · $${summary.cost_usd.toFixed(4)} · ${summary.usage.total} tokens · ${formatDuration(summary.duration_ms)} · exit ${summary.exit_code}`,
    ...(summary.problems.length > 0 ? ["", ...summary.problems.map((p) => `- **${p}**`)] : []),
    "",
    "| task | class | exit | run | time | cost |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
  try {
    appendFileSync(file, markdown);
  } catch (error) {
    io.stderr.write(`oc-exec batch: could not write $GITHUB_STEP_SUMMARY: ${(error as Error).message}\n`);
  }
}

/**
 * `oc-exec merge SHARD.jsonl...`: the shards' streams as one, with one summary. Every task must
 * appear exactly once and every shard of the set must be there; otherwise the summary's problems
 * name what is missing or duplicated and the exit status is 5 (the batch is not complete).
 */
export async function mergeCommand(files: string[], flags: { tasks?: string }, io: CliIo): Promise<number> {
  const writer = createStdoutWriter();
  const seen = new Map<string, string>();
  const problems: string[] = [];
  const outcomes: TaskOutcome[] = [];
  const shards = new Map<number, string>();
  let shardCount: number | null = null;
  let cost = 0;
  let duration = 0;
  const usage = emptyUsage();
  for (const file of files) {
    // What is wrong with one file is a problem of the merge, named in its summary; the other files
    // are still merged, so nothing that did run is lost.
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      problems.push(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      continue;
    }
    let summary: BatchResult | null = null;
    const events: OcEvent[] = [];
    for (const [index, line] of text.split("\n").entries()) {
      if (line.trim() === "") continue;
      let event: OcEvent;
      try {
        event = JSON.parse(line) as OcEvent;
      } catch {
        problems.push(`${file}:${index + 1}: not JSON: ${line.slice(0, 100)}`);
        continue;
      }
      if (event.type === "batch.result") summary = event;
      else if (event.task_id !== undefined) events.push(event);
    }
    if (!summary) {
      problems.push(`${file} has no batch.result line: the shard did not finish`);
      continue;
    }
    // A shard that could not run says why in its own problems.
    for (const p of summary.problems) problems.push(`${file}: ${p}`);
    if (summary.shard) {
      shardCount ??= summary.shard.count;
      if (summary.shard.count !== shardCount)
        problems.push(
          `${file} is shard ${summary.shard.index}/${summary.shard.count}, but another file is of ${shardCount} shards`,
        );
      const before = shards.get(summary.shard.index);
      if (before) problems.push(`shard ${summary.shard.index} appears twice: ${before} and ${file}`);
      shards.set(summary.shard.index, file);
    }
    // A task already merged from another file is reported, and its second copy left out of the stream.
    const fresh = new Set<string>();
    for (const task of summary.tasks) {
      const before = seen.get(task.id);
      if (before) {
        problems.push(`task ${task.id} appears twice: in ${before} and in ${file}`);
        continue;
      }
      seen.set(task.id, file);
      fresh.add(task.id);
      outcomes.push(task);
    }
    for (const event of events) if (fresh.has(event.task_id!)) writer.write(event);
    cost += summary.cost_usd;
    duration = Math.max(duration, summary.duration_ms);
    addUsage(usage, summary.usage);
  }
  if (shardCount !== null)
    for (let i = 1; i <= shardCount; i++) if (!shards.has(i)) problems.push(`shard ${i}/${shardCount} is missing`);
  if (flags.tasks) {
    let text: string | null = null;
    try {
      text = readFileSync(flags.tasks, "utf8");
    } catch (error) {
      problems.push(
        `--tasks: cannot read ${flags.tasks}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    const parsed = text === null ? { tasks: [], problems: [] } : parseTasks(text);
    for (const p of parsed.problems) problems.push(`${flags.tasks}:${p.line}: ${p.message}`);
    for (const task of parsed.tasks) if (!seen.has(task.id)) problems.push(`task ${task.id} is missing`);
    const order = new Map(parsed.tasks.map((t, i) => [t.id, i]));
    outcomes.sort((a, b) => (order.get(a.id) ?? Infinity) - (order.get(b.id) ?? Infinity));
  }
  const summary = batchResult({
    tasks: outcomes,
    usage,
    costUsd: cost,
    durationMs: duration,
    shard: null,
    problems,
    // A shard the budget stopped leaves tasks not run for that reason: the merged batch was stopped by it.
    stop: outcomes.some((t) => t.class === "budget_exceeded" && t.run === "not_run") ? "budget_exceeded" : null,
  });
  writer.write(summary);
  await writer.drained();
  for (const p of problems) io.stderr.write(`oc-exec merge: ${p}\n`);
  writeSummary(io, summary);
  return summary.exit_code;
}
