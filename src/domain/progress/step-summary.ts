// Under GitHub Actions: a batch's (or merge's) summary as a table in $GITHUB_STEP_SUMMARY, and its
// problems and failed tasks as ::error:: annotations. Everything in it is printable (a hostile tasks
// file or shard cannot inject markup or escapes) and it stays well under GitHub's 1 MiB a step.
import { appendFileSync } from "node:fs";
import type { BatchResult } from "../../contract/schema.js";
import { formatDuration } from "../../kernel/duration.js";
import { printable } from "../output/printable.js";
import { countsText } from "./batch-progress.js";

/** Far under GitHub's 1 MiB per step: the rest of the step may write its own summary too. */
const SUMMARY_MAX_CHARS = 200_000;
/** GitHub shows at most 10 error annotations per step; more are noise. */
const ANNOTATIONS_MAX = 10;

/** A workflow command's data, escaped as GitHub reads it. */
export const escapeWorkflowData = (s: string) => s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
/** A workflow command's property (`title=`), escaped as GitHub reads it: a `:` or `,` would end it. */
export const escapeWorkflowProperty = (s: string) => escapeWorkflowData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");

/** A table cell: one line, no pipe that would end the cell. */
const cell = (s: string) => printable(s.split("\n")[0]!.slice(0, 160)).replace(/\|/g, "\\|");

function heading(summary: BatchResult): string {
  if (summary.ok) return "all tasks succeeded";
  if (summary.problems.length > 0)
    return summary.tasks.length === 0 ? "the batch could not run" : "the batch is not complete";
  if (summary.exit_code === 6) return "the batch budget stopped it";
  if (summary.exit_code === 130 || summary.exit_code === 143) return "a signal stopped it";
  return "some tasks did not succeed";
}

/** The markdown of a batch's summary, cut to SUMMARY_MAX_CHARS with the rest counted. */
export function batchSummaryMarkdown(summary: BatchResult): string {
  const title = `### oc-exec batch${summary.shard ? ` (shard ${summary.shard.index}/${summary.shard.count})` : ""}: ${heading(summary)}`;
  const line = `${countsText(summary) || "no task ran"} · $${summary.cost_usd.toFixed(4)} · ${summary.usage.total} tokens · ${formatDuration(summary.duration_ms)} · exit ${summary.exit_code}`;
  const head = [
    title,
    "",
    line,
    ...(summary.problems.length > 0 ? ["", ...summary.problems.map((p) => `- **${cell(p)}**`)] : []),
  ];
  if (summary.tasks.length === 0) return `${head.join("\n")}\n`;
  const rows: string[] = [];
  let size = head.join("\n").length;
  for (const [i, t] of summary.tasks.entries()) {
    const why = t.error ? `${t.error.name}: ${t.error.message}` : "";
    const row = `| ${cell(t.id)} | ${t.class} | ${t.exit_code} | ${t.run} | ${formatDuration(t.duration_ms)} | $${t.cost_usd.toFixed(4)} | ${cell(why)} |`;
    if (size + row.length > SUMMARY_MAX_CHARS) {
      rows.push(`| … | ${summary.tasks.length - i} more task(s), not listed: the stream has them all | | | | | |`);
      break;
    }
    rows.push(row);
    size += row.length + 1;
  }
  return [
    ...head,
    "",
    "| task | class | exit | run | time | cost | why |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}

/** Appends the summary when GITHUB_STEP_SUMMARY names a file, and annotates under GitHub Actions. */
export function writeBatchStepSummary(
  env: NodeJS.ProcessEnv,
  say: (text: string) => void,
  summary: BatchResult,
  stderr?: NodeJS.WritableStream,
): void {
  if (env.GITHUB_ACTIONS === "true" && stderr) {
    const failed = summary.tasks.filter((t) => t.class !== "success" && t.run !== "skipped");
    const notes = [
      ...summary.problems.map((p) => ["oc-exec batch", p] as const),
      ...failed.map(
        (t) => [`oc-exec task ${t.id}: ${t.class} (exit ${t.exit_code})`, t.error?.message ?? t.class] as const,
      ),
    ];
    for (const [title, message] of notes.slice(0, ANNOTATIONS_MAX))
      stderr.write(
        `::error title=${escapeWorkflowData(printable(title))}::${escapeWorkflowData(printable(message))}\n`,
      );
    if (notes.length > ANNOTATIONS_MAX)
      stderr.write(`::error title=oc-exec batch::${notes.length - ANNOTATIONS_MAX} more; see the step summary\n`);
  }
  const file = env.GITHUB_STEP_SUMMARY;
  if (!file) return;
  try {
    appendFileSync(file, batchSummaryMarkdown(summary));
  } catch (error) {
    say(`could not write $GITHUB_STEP_SUMMARY: ${(error as Error).message}`);
  }
}
