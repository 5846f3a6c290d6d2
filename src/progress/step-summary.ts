// Under GitHub Actions: a batch's (or merge's) summary as a table in $GITHUB_STEP_SUMMARY. The one
// home of the step summary; a single turn's lives in progress/format.ts (formatMarkdownSummary).
import { appendFileSync } from "node:fs";
import type { BatchResult } from "../contract/schema.js";
import { formatDuration } from "../duration.js";
import { countsText } from "./batch-progress.js";

/** Appends the summary when GITHUB_STEP_SUMMARY names a file; a failed write is said on stderr. */
export function writeBatchStepSummary(env: NodeJS.ProcessEnv, say: (text: string) => void, summary: BatchResult): void {
  const file = env.GITHUB_STEP_SUMMARY;
  if (!file) return;
  const counts = countsText(summary);
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
    say(`could not write $GITHUB_STEP_SUMMARY: ${(error as Error).message}`);
  }
}
