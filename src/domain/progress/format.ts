// Turns events into the human lines on stderr. Pure: the same lines serve the CI log (plain) and
// the terminal (above the spinner); color is injected so NO_COLOR and pipes get none.

import { CLASS_MEANING } from "../../contract/exit-codes.js";
import type { OcEvent, ResultEvent, Usage } from "../../contract/schema.js";
import { formatDuration } from "../../kernel/duration.js";
import { printableLine } from "../output/printable.js";

export type Paint = {
  ok(s: string): string;
  bad(s: string): string;
  warn(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
};

export const noPaint: Paint = { ok: (s) => s, bad: (s) => s, warn: (s) => s, dim: (s) => s, bold: (s) => s };

function formatTokens(usage: Usage): string {
  return `${usage.total} tokens (${usage.input} in, ${usage.output} out${usage.reasoning ? `, ${usage.reasoning} reasoning` : ""})`;
}

export function formatCost(usd: number): string {
  return usd === 0 ? "$0" : usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return printableLine(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}

/**
 * Text from the turn (a path, a command, a message) in a line of the log: escaped by printableLine,
 * since the agent chooses it (a file name can hold a line break and `::stop-commands::`).
 */
const t = printableLine;

/** Text from the turn in the step summary's markdown: one line, every ASCII punctuation escaped. */
const md = (text: string) => printableLine(text).replace(/[!-/:-@[-`{-~]/g, "\\$&");

function toolSubject(event: Extract<OcEvent, { type: "tool" }>): string {
  const input = event.input as Record<string, unknown> | null;
  const fromInput =
    input && typeof input === "object"
      ? (input.command ?? input.filePath ?? input.pattern ?? input.url ?? input.path)
      : null;
  return oneLine(typeof fromInput === "string" ? fromInput : (event.title ?? ""), 60);
}

/** One line for an event worth a human's attention, or null. */
export function formatEventLine(event: OcEvent, paint: Paint = noPaint): string | null {
  switch (event.type) {
    case "run.started":
      return paint.dim(
        `oc-exec ${event.oc_exec_version} · opencode ${t(event.opencode.version ?? "?")} · ${event.opencode.host ? `${t(event.opencode.host)}:` : ""}${t(event.cwd)}`,
      );
    case "session.started":
      return paint.dim(`session ${t(String(event.session_id))}${event.resumed ? " (resumed)" : ""}`);
    case "step.finished":
      return paint.dim(
        `step ${event.step} finished (${event.reason ?? "?"}) · ${event.usage.total} tokens · ${formatCost(event.cost_usd)}`,
      );
    case "tool": {
      const mark = event.status === "completed" ? paint.ok("✓") : paint.bad("✗");
      const tail =
        event.status === "completed"
          ? event.duration_ms !== null
            ? formatDuration(event.duration_ms)
            : ""
          : event.status;
      return `${mark} ${t(event.tool)}  ${toolSubject(event)}  ${paint.dim(tail)}`.trimEnd();
    }
    case "permission.denied":
      return paint.bad(
        `✗ permission ${t(event.permission ?? event.tool ?? "?")} denied${event.pattern ? ` (${t(event.pattern)})` : ""}`,
      );
    case "file.changed":
      return paint.dim(`  ${event.change} ${t(event.path)}`);
    case "warning":
      return paint.warn(`warning [${event.code}]: ${t(event.message)}`);
    case "retry":
      return paint.warn(
        `↻ attempt ${event.failed_attempt} failed (${event.class}: ${t(event.name)}): ${oneLine(event.message, 120)}; attempt ${event.failed_attempt + 1}${event.model ? ` on ${t(event.model)}` : ""} in ${formatDuration(event.wait_ms)}${event.resumed ? ", in the same session" : ", from the start"}`,
      );
    case "verify.finished":
      return event.passed
        ? `${paint.ok("✓")} verify  ${oneLine(event.command, 60)}  ${paint.dim(formatDuration(event.duration_ms))}`
        : paint.bad(
            `✗ verify  ${oneLine(event.command, 60)}  ${event.timed_out ? "timed out" : event.exit_code === null ? (event.signal ?? "stopped") : `exit ${event.exit_code}`}`,
          );
    case "error":
      return paint.bad(
        `error [${event.class}] ${t(event.name)}${event.status_code !== null ? ` (HTTP ${event.status_code})` : ""}: ${t(event.message)}`,
      );
    case "result":
      return null;
    default:
      return null;
  }
}

/** The closing summary: outcome, what the exit code means, figures, and how to resume. */
export function formatSummary(
  result: ResultEvent,
  paint: Paint = noPaint,
  { resumable = true }: { resumable?: boolean } = {},
): string[] {
  const lines: string[] = [];
  const head = result.ok
    ? paint.ok(paint.bold(`✔ success (exit 0)`))
    : paint.bad(paint.bold(`✖ ${result.class} (exit ${result.exit_code}): ${CLASS_MEANING[result.class]}`));
  lines.push(head);
  if (result.error) lines.push(paint.bad(`  ${t(result.error.name)}: ${t(result.error.message)}`));
  const tools =
    result.tools.total === 0
      ? "no tools"
      : `${result.tools.total} tool${result.tools.total === 1 ? "" : "s"}${result.tools.failed ? `, ${result.tools.failed} failed` : ""}${result.tools.denied ? `, ${result.tools.denied} denied` : ""}`;
  lines.push(
    `  ${formatDuration(result.duration_ms)} · ${result.steps} step${result.steps === 1 ? "" : "s"} · ${tools} · ${formatTokens(result.usage)} · ${formatCost(result.cost_usd)}`,
  );
  if (result.files_changed.length > 0)
    lines.push(`  files changed: ${result.files_changed.map((f) => `${t(f.path)} (${f.change})`).join(", ")}`);
  // A deleted session (--ephemeral) or a rehearsal's (its HOME is gone) cannot be resumed: no command.
  if (result.session_id && result.session_deleted !== true && resumable)
    lines.push(
      paint.dim(`  session ${t(result.session_id)} · resume: oc-exec --session ${t(result.session_id)} "..."`),
    );
  return lines;
}

/** The GitHub step summary: a small markdown table of the outcome. */
export function formatMarkdownSummary(result: ResultEvent): string {
  const rows = [
    ["outcome", result.ok ? "✅ success" : `❌ ${result.class} (exit ${result.exit_code})`],
    ...(result.error ? [["error", `${md(result.error.name)}: ${md(result.error.message)}`]] : []),
    ["duration", formatDuration(result.duration_ms)],
    [
      "steps / tools",
      `${result.steps} / ${result.tools.total} (${result.tools.failed} failed, ${result.tools.denied} denied)`,
    ],
    ["tokens", formatTokens(result.usage)],
    ["cost", formatCost(result.cost_usd)],
    ["files changed", result.files_changed.map((f) => `<code>${md(f.path)}</code> (${f.change})`).join(", ") || "none"],
    ["session", result.session_id ? md(result.session_id) : "none"],
  ];
  return `### oc-exec\n\n| | |\n|---|---|\n${rows.map(([k, v]) => `| ${k} | ${v} |`).join("\n")}\n\n`;
}
