// What a run reports besides its stream: the --junit file and the OpenTelemetry trace the OTEL_*
// variables ask for. Both watch the events as they are written and are written once the stream's
// last line is out, so neither can touch stdout or come before the result.
import type { OcEvent } from "../contract/schema.js";
import { makeRedactor, secretValues } from "../events/secrets.js";
import { TracePlan } from "../telemetry/trace-plan.js";
import { traceSettings } from "../telemetry/trace-settings.js";
import { openJunitReport } from "./junit-file.js";

export type RunReport = {
  observe(event: OcEvent): void;
  /** Writes every report; returns what went wrong, one line each, for stderr. */
  write(): Promise<string[]>;
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
      if (failed) problems.push(failed);
      if (plan && settings) {
        // The SDK loads here, after the last line, and only for a run that asked for a trace.
        const { exportTrace } = await import("../telemetry/export-trace.js");
        const exported = await exportTrace(plan.roots(), settings, env);
        // An exporter's error can quote the endpoint or a header: redacted like everything oc-exec writes.
        if (exported) problems.push(makeRedactor(secretValues(env)).text(exported));
      }
      return problems;
    },
  };
}
