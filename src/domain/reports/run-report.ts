// What a run reports besides its stream: the --junit file and the OpenTelemetry trace the OTEL_*
// variables ask for. Both watch the events as they are written and are written once the stream's
// last line is out, so neither can touch stdout or come before the result.
import { exitCodeOf } from "../../contract/exit-codes.js";
import type { OcEvent } from "../../contract/schema.js";
import { makeRedactor, secretValues } from "../events/secrets.js";
import { printableLine } from "../output/printable.js";
import { TracePlan } from "../telemetry/trace-plan.js";
import { traceSettings } from "../telemetry/trace-settings.js";
import { openJunitReport } from "./junit-file.js";

export type RunReport = {
  observe(event: OcEvent): void;
  /**
   * Writes every report; returns what went wrong, one line each, for stderr, and whether a write was
   * refused as unsafe (a link planted at the path during the run): the run then exits 5.
   */
  write(): Promise<{ problems: string[]; refused: boolean }>;
};

/**
 * The run's reports, or null when there are none. An unwritable --junit path throws a ConfigError
 * now, before anything runs; a trace the variables ask for but oc-exec cannot send is said now, on
 * stderr, and the run goes on.
 */
export function openRunReport(
  request: { junit: string | null; suiteName: string; traces: boolean },
  env: NodeJS.ProcessEnv,
  stderr: { write(text: string): unknown },
): RunReport | null {
  const junit = request.junit === null ? null : openJunitReport(request.junit, request.suiteName);
  const traced = request.traces ? traceSettings(env) : { settings: null, problem: null };
  if (traced.problem) stderr.write(`oc-exec: ${traced.problem}\n`);
  const settings = traced.settings;
  const plan = settings ? new TracePlan({ captureContent: settings.captureContent }) : null;
  if (!junit && !plan) return null;
  return {
    observe(event) {
      junit?.observe(event);
      plan?.observe(event);
    },
    async write() {
      const problems: string[] = [];
      const failed = junit?.write() ?? null;
      if (failed) problems.push(failed.problem);
      if (plan && settings) {
        // The SDK loads here, after the last line, and only for a run that asked for a trace.
        const { exportTrace } = await import("../telemetry/export-trace.js");
        const exported = await exportTrace(plan.roots(), settings, env);
        // An exporter's error can quote the endpoint or a header: redacted like everything oc-exec writes.
        if (exported) problems.push(makeRedactor(secretValues(env)).text(exported));
      }
      return { problems, refused: failed?.refused === true };
    },
  };
}

/**
 * Writes the run's reports once its stream is out, and says on stderr what went wrong. Returns the
 * exit status the run must end with instead of its own when a report was refused as unsafe (exit 5,
 * whatever the turn did: the result line still says that), or null.
 */
export async function writeRunReport(
  report: RunReport | null,
  stderr: { write(text: string): unknown },
): Promise<number | null> {
  if (!report) return null;
  const { problems, refused } = await report.write();
  // A problem can name what the agent made (a link's target): kept on its line (printable.ts).
  for (const problem of problems) stderr.write(`oc-exec: ${printableLine(problem)}\n`);
  if (!refused) return null;
  const exit = exitCodeOf("config_error");
  stderr.write(`oc-exec: a report was refused: exit ${exit}\n`);
  return exit;
}
