// `oc-exec merge SHARD.jsonl...`: the shards' streams of one sharded batch as one stream, with one
// batch.result (app/batch/merge.ts), the reports and the step summary as a batch writes them.
import { readFileSync } from "node:fs";
import { type MergeInput, mergeStreams } from "../app/batch/merge.js";
import { writeBatchResult } from "../app/batch/summary.js";
import type { OcEvent } from "../contract/schema.js";
import { capProblems } from "../domain/output/printable.js";
import { createStdoutWriter } from "../domain/output/stdout-writer.js";
import { batchEndLine } from "../domain/progress/batch-progress.js";
import { writeBatchStepSummary } from "../domain/progress/step-summary.js";
import { openRunReport } from "../domain/reports/run-report.js";
import { errnoOf, sayer, writeReport } from "./batch-command.js";
import type { CliIo } from "./io.js";

/** `oc-exec merge SHARD.jsonl...`: the shards' streams as one, with one summary (app/batch/merge.ts). */
export async function mergeCommand(
  files: string[],
  flags: { tasks?: string; junit?: string },
  io: CliIo,
): Promise<number> {
  // A merge exports no trace: each shard's batch exported its own.
  const report = openRunReport(
    { junit: flags.junit ?? null, suiteName: "oc-exec merge", traces: false },
    io.env,
    io.stderr,
  );
  const read = (file: string): MergeInput => {
    try {
      return { file, text: readFileSync(file, "utf8") };
    } catch (error) {
      return { file, error: errnoOf(error) };
    }
  };
  const merged = mergeStreams(files.map(read), flags.tasks ? read(flags.tasks) : null);
  const writer = createStdoutWriter(io.stdout);
  const write = (event: OcEvent) => {
    report?.observe(event);
    writer.write(event);
  };
  for (const event of merged.events) write(event);
  const problems = capProblems(merged.end.problems);
  const summary = writeBatchResult({ ...merged.end, problems }, write);
  await writer.drained();
  const refused = await writeReport(report, io);
  const say = sayer(io, "merge");
  for (const p of problems) say(p);
  say(batchEndLine(summary));
  writeBatchStepSummary(io.env, say, summary, io.stderr);
  return refused ?? summary.exit_code;
}
