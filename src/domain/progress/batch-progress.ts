// A batch's progress on stderr: in a terminal one live line (ora, configured in spinner.ts), in a
// CI log one plain line per finished task; the end line that sums the batch up (batch and merge).
import type { Ora } from "ora";
import type { BatchResult, ResultEvent, TaskOutcome } from "../../contract/schema.js";
import { formatDuration } from "../../kernel/duration.js";
import { printableLine } from "../output/printable.js";
import { canDrawLiveLine, createSpinner } from "./spinner.js";

export type BatchProgress = {
  started(id: string): void;
  finished(id: string, result: ResultEvent, run: TaskOutcome["run"]): void;
  note(text: string): void;
  stop(): void;
};

type Stderr = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export function createBatchProgress(
  stderr: Stderr,
  env: NodeJS.ProcessEnv,
  quiet: boolean,
  total: number,
  skipped: number,
): BatchProgress {
  if (quiet) return { started() {}, finished() {}, note() {}, stop() {} };
  const running = new Set<string>();
  let done = skipped;
  let failed = 0;
  let cost = 0;
  const line = () =>
    `${done}/${total} done · ${running.size} running · ${failed} failed · $${cost.toFixed(4)}${running.size > 0 ? ` · ${[...running].slice(0, 4).join(", ")}${running.size > 4 ? ", …" : ""}` : ""}`;
  const plain = (text: string) => stderr.write(`${text}\n`);
  let spinner: Ora | null = null;
  // ora loads while the first tasks start; a batch that ends before it has loaded gets no spinner.
  let ended = false;
  if (skipped > 0) plain(`${skipped} task(s) skipped: they succeeded in the --resume stream`);
  if (canDrawLiveLine(stderr as NodeJS.WriteStream, env)) {
    void createSpinner(stderr as NodeJS.WriteStream).then((created) => {
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
    started(id) {
      running.add(id);
      if (spinner) spinner.text = line();
    },
    finished(id, result, run) {
      running.delete(id);
      done++;
      cost += result.cost_usd;
      if (result.class !== "success") failed++;
      const why = result.error ? `: ${printableLine(result.error.message.split("\n")[0]!.slice(0, 160))}` : "";
      print(
        `[${done}/${total}] ${id}: ${result.class} (${result.exit_code})${run === "not_run" ? " not run" : ""} ${formatDuration(result.duration_ms)} $${result.cost_usd.toFixed(4)}${why}`,
      );
    },
    note: (text) => print(text),
    stop() {
      ended = true;
      spinner?.stop();
    },
  };
}

export const countsText = (summary: BatchResult) =>
  Object.entries(summary.counts)
    .map(([cls, n]) => `${n} ${cls}`)
    .join(", ");

/** The line that ends a batch's (or merge's) report on stderr. */
export function batchEndLine(summary: BatchResult): string {
  const skipped = summary.tasks.filter((t) => t.run === "skipped").length;
  return `${summary.tasks.length} task(s): ${countsText(summary) || "none run"}${skipped > 0 ? `, ${skipped} skipped` : ""}; $${summary.cost_usd.toFixed(4)}, ${summary.usage.total} tokens, ${formatDuration(summary.duration_ms)}; exit ${summary.exit_code}`;
}
