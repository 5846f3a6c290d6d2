// Human progress on stderr. In a terminal: an ora spinner with the elapsed time, current step and
// running figures, with event lines printed above it. Elsewhere (CI logs): plain lines, no cursor
// movement. --quiet: nothing.

import { appendFileSync } from "node:fs";
import chalk, { Chalk } from "chalk";
import type { OcEvent } from "../../contract/schema.js";
import { formatDuration } from "../../kernel/duration.js";
import { parseStderrLine, stripAnsi } from "../events/stderr-lines.js";
import { printableLine } from "../output/printable.js";
import { formatCost, formatEventLine, formatMarkdownSummary, formatSummary, noPaint, type Paint } from "./format.js";
import { canDrawLiveLine, createSpinner } from "./spinner.js";
import { escapeWorkflowData, escapeWorkflowProperty } from "./step-summary.js";

/** An INFO or DEBUG line of opencode's own log. */
function isChatter(line: string): boolean {
  const parsed = parseStderrLine(line);
  return parsed.kind === "log" && (parsed.level === "INFO" || parsed.level === "DEBUG");
}

export type Reporter = {
  event(event: OcEvent): void;
  /** With --verbose: one of opencode's own stderr lines. */
  stderrLine?(line: string): void;
  /** The first sign that a tool started; the spinner shows it until the tool's event arrives. */
  toolStarted?(tool: string): void;
  stop(): void;
};

export type ReporterOptions = {
  quiet: boolean;
  verbose: boolean;
  color: "auto" | "always" | "never";
  stream?: NodeJS.WriteStream;
  env?: NodeJS.ProcessEnv;
  /** Prefix plain lines with the time (CI logs). */
  timestamps?: boolean;
};

function useColor(color: ReporterOptions["color"], stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
  if (color === "always") return true;
  if (color === "never") return false;
  if ("NO_COLOR" in env && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false") return true;
  return Boolean(stream.isTTY);
}

function painter(enabled: boolean): Paint {
  if (!enabled) return noPaint;
  const c = new Chalk({ level: chalk.level || 1 });
  return { ok: c.green, bad: c.red, warn: c.yellow, dim: c.dim, bold: c.bold };
}

const quietReporter: Reporter = { event: () => {}, stop: () => {} };

export async function createReporter(options: ReporterOptions): Promise<Reporter> {
  if (options.quiet) return quietReporter;
  const stream = options.stream ?? process.stderr;
  const env = options.env ?? process.env;
  const paint = painter(useColor(options.color, stream, env));
  const stamp = () => (options.timestamps ? `${paint.dim(new Date().toISOString())} ` : "");
  const write = (line: string) => stream.write(`${stamp()}${line}\n`);
  const github = githubActions(env, stream);
  // A rehearsal's session lived in a throwaway HOME that is gone: there is nothing to resume.
  let rehearsal = false;
  const plain: Reporter = {
    event(event) {
      github?.event(event);
      if (event.type === "warning" && event.code === "rehearsal") rehearsal = true;
      if (event.type === "result") {
        for (const line of formatSummary(event, paint, { resumable: !rehearsal })) write(line);
        return;
      }
      const line = formatEventLine(event, paint);
      if (line !== null) write(line);
    },
    stderrLine: options.verbose
      ? (line) => {
          // opencode's INFO log (which oc-exec asks for, to learn models and retries) is dozens of
          // lines a turn; --verbose shows what opencode says, its warnings and its errors.
          if (!isChatter(line)) write(paint.dim(`opencode: ${printableLine(stripAnsi(line))}`));
        }
      : undefined,
    stop() {},
  };
  if (!canDrawLiveLine(stream, env, options.color)) return plain;
  return createSpinnerReporter(stream, paint, plain);
}

/** GitHub Actions: warnings and errors as workflow annotations, and a step summary in markdown. */
function githubActions(env: NodeJS.ProcessEnv, stream: NodeJS.WritableStream): { event(event: OcEvent): void } | null {
  if (env.GITHUB_ACTIONS !== "true") return null;
  // Workflow commands are read from stdout or stderr alike; stdout is ours, so stderr it is.
  const escapeData = escapeWorkflowData;
  const out = (line: string) => stream.write(`${line}\n`);
  return {
    event(event) {
      if (event.type === "warning") out(`::warning title=oc-exec ${event.code}::${escapeData(event.message)}`);
      // An error's name is opencode's (a provider's, a plugin's): escaped like the message.
      else if (event.type === "error")
        out(`::error title=oc-exec ${escapeWorkflowProperty(event.name)}::${escapeData(event.message)}`);
      else if (event.type === "result") {
        if (!event.ok)
          out(
            `::error title=oc-exec ${event.class} (exit ${event.exit_code})::${escapeData(event.error?.message ?? event.class)}`,
          );
        if (env.GITHUB_STEP_SUMMARY) {
          try {
            appendFileSync(env.GITHUB_STEP_SUMMARY, formatMarkdownSummary(event));
          } catch {
            // A summary is a courtesy.
          }
        }
      }
    },
  };
}

async function createSpinnerReporter(stream: NodeJS.WriteStream, paint: Paint, plain: Reporter): Promise<Reporter> {
  const started = Date.now();
  let step = 0;
  let tool: string | null = null;
  let tokens = 0;
  let cost = 0;
  const spinner = await createSpinner(stream);
  const label = () =>
    `${formatDuration(Date.now() - started)} · step ${step || "-"}${tool ? ` · running ${tool}` : ""} · ${tokens} tokens · ${formatCost(cost)}`;
  const ticker = setInterval(() => (spinner.text = label()), 250);
  ticker.unref();
  spinner.start(label());
  return {
    stderrLine: plain.stderrLine
      ? (line) => {
          spinner.clear();
          plain.stderrLine!(line);
          spinner.render();
        }
      : undefined,
    toolStarted(name) {
      tool = name;
      spinner.text = label();
    },
    event(event) {
      // The tool hint arrives out of band, ahead of the queued events: only the tool's own event
      // (or the end of its step) clears it.
      if (event.type === "step.started") step = event.step;
      else if (event.type === "step.finished") {
        tokens += event.usage.total;
        cost += event.cost_usd;
        tool = null;
      } else if (event.type === "tool" && event.tool === tool) tool = null;
      if (event.type === "result") {
        clearInterval(ticker);
        spinner.stop();
        plain.event(event);
        return;
      }
      const line = formatEventLine(event, paint);
      if (line !== null) {
        spinner.clear();
        stream.write(`${line}\n`);
        spinner.render();
      }
      spinner.text = label();
    },
    stop() {
      clearInterval(ticker);
      if (spinner.isSpinning) spinner.stop();
    },
  };
}
