// Whether a run exports an OpenTelemetry trace, read from the standard OTEL_* variables only. Pure:
// the SDK is loaded (export-trace.ts) only when this says yes, so a run that asks for nothing pays
// nothing at start-up.

export type TraceSettings = {
  protocol: "http/protobuf" | "http/json";
  /** The GenAI conventions' opt-in: the final message and the tools' arguments and results go on the spans. */
  captureContent: boolean;
  /** The longest the export after the result line may take. */
  flushTimeoutMs: number;
};

/**
 * The bound on the export at the end: a collector that does not answer costs a CI step at most
 * this, after its result line. Short enough not to matter next to a turn; long enough for a
 * collector across a network.
 */
const TRACE_FLUSH_TIMEOUT_MS = 5_000;

const isTrue = (value: string | undefined) => value?.trim().toLowerCase() === "true";

/**
 * Trace export is asked for by an OTLP endpoint (general or for traces) or OTEL_TRACES_EXPORTER=otlp;
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off. What oc-exec cannot do (a
 * console exporter would write to stdout, which carries events only; gRPC) is a problem, said once,
 * and nothing is exported.
 */
export function traceSettings(env: NodeJS.ProcessEnv): {
  settings: TraceSettings | null;
  problem: string | null;
  /** Why no trace is exported when none is asked for (doctor says it). */
  off?: string;
} {
  if (isTrue(env.OTEL_SDK_DISABLED)) return { settings: null, problem: null, off: "OTEL_SDK_DISABLED" };
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "");
  if (exporters.includes("none")) return { settings: null, problem: null, off: "OTEL_TRACES_EXPORTER=none" };
  const other = exporters.find((e) => e !== "otlp");
  const endpoint = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (!endpoint && !exporters.includes("otlp") && other === undefined)
    return {
      settings: null,
      problem: null,
      off: "no OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER=otlp",
    };
  if (other !== undefined)
    return {
      settings: null,
      problem: `OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER}: oc-exec exports traces over OTLP only (stdout carries its events and nothing else); no trace is exported`,
    };
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ||
    env.OTEL_EXPORTER_OTLP_PROTOCOL ||
    "http/protobuf"
  ).trim();
  if (protocol !== "http/protobuf" && protocol !== "http/json")
    return {
      settings: null,
      problem: `OTLP protocol ${JSON.stringify(protocol)}: oc-exec exports over http/protobuf or http/json (a collector's port 4318); no trace is exported`,
    };
  return {
    settings: {
      protocol,
      captureContent: isTrue(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
      flushTimeoutMs: TRACE_FLUSH_TIMEOUT_MS,
    },
    problem: null,
  };
}

/** The OTLP headers variables: their values (API keys of tracing backends) are secrets. */
export const OTLP_HEADER_VARIABLES = [
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
  "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
] as const;

/** The values in an OTLP headers variable (`key=value,key2=value2`, values URL-encoded). */
export function headerValues(text: string): string[] {
  const values: string[] = [];
  for (const pair of text.split(",")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    const raw = pair.slice(eq + 1).trim();
    values.push(raw);
    try {
      const decoded = decodeURIComponent(raw);
      if (decoded !== raw) values.push(decoded);
    } catch {
      // not URL-encoded: the raw value is the secret
    }
  }
  return values.filter((v) => v !== "");
}

/** What of the environment never reaches opencode: its own trace export (see docs/usage.md, Traces). */
export function isTelemetryVariable(name: string): boolean {
  return name.startsWith("OTEL_") || name === "TRACEPARENT" || name === "TRACESTATE";
}
