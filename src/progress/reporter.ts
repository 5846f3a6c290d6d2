// Human progress on stderr. In a terminal: an ora spinner with the elapsed time, current step and
// running figures, with event lines printed above it. Elsewhere (CI logs): plain lines, no cursor
// movement. --quiet: nothing.
import chalk, { Chalk } from "chalk";
import type { OcEvent } from "../events/schema.js";
import { formatCost, formatDuration, formatEventLine, formatSummary, noPaint, type Paint } from "./format.js";

export type Reporter = { event(event: OcEvent): void; stop(): void };

export type ReporterOptions = {
  quiet: boolean;
  verbose: boolean;
  color: "auto" | "always" | "never";
  stream?: NodeJS.WriteStream;
  env?: NodeJS.ProcessEnv;
};

export function useColor(color: ReporterOptions["color"], stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
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

export const quietReporter: Reporter = { event: () => {}, stop: () => {} };

export async function createReporter(options: ReporterOptions): Promise<Reporter> {
  if (options.quiet) return quietReporter;
  const stream = options.stream ?? process.stderr;
  const paint = painter(useColor(options.color, stream, options.env ?? process.env));
  const write = (line: string) => stream.write(`${line}\n`);
  const plain: Reporter = {
    event(event) {
      if (event.type === "result") {
        for (const line of formatSummary(event, paint)) write(line);
        return;
      }
      const line = formatEventLine(event, paint);
      if (line !== null) write(line);
    },
    stop() {},
  };
  if (!stream.isTTY) return plain;
  return createSpinnerReporter(stream, paint, plain);
}

async function createSpinnerReporter(stream: NodeJS.WriteStream, paint: Paint, plain: Reporter): Promise<Reporter> {
  // ora is only loaded in a terminal: CI runs and --quiet never pay for it.
  const { default: ora } = await import("ora");
  const started = Date.now();
  let step = 0;
  let tool: string | null = null;
  let tokens = 0;
  let cost = 0;
  const spinner = ora({ stream, discardStdin: false, isEnabled: true });
  const label = () =>
    `${formatDuration(Date.now() - started)} · step ${step || "-"}${tool ? ` · running ${tool}` : ""} · ${tokens} tokens · ${formatCost(cost)}`;
  const ticker = setInterval(() => (spinner.text = label()), 250);
  ticker.unref();
  spinner.start(label());
  return {
    event(event) {
      if (event.type === "step.started") {
        step = event.step;
        tool = null;
      } else if (event.type === "step.finished") {
        tokens += event.usage.total;
        cost += event.cost_usd;
        tool = null;
      } else if (event.type === "tool") tool = null;
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
