// The planned trace (trace-plan.ts), handed to the official OpenTelemetry SDK and sent by its OTLP
// exporter once the run's last line is out. Loaded by a dynamic import() only when the OTEL_*
// variables ask for a trace (trace-settings.ts): a run that asks for none never loads the SDK.
//
// The spans are made after the fact with their events' times, collected in memory and exported in
// one call, so the exporter's own answer (a collector that refused or never answered) comes back
// here, to be said on stderr, rather than to the SDK's silent diagnostic logger.
import { type Context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { VERSION } from "../../kernel/version.js";
import type { PlannedSpan } from "./trace-plan.js";
import type { TraceSettings } from "./trace-settings.js";

/** The instrumentation scope on every span: how oc-exec's spans are told from anyone else's. */
const SCOPE = "oc-exec";

/** A W3C trace context from the environment (TRACEPARENT, TRACESTATE), as CI systems set it. */
function parentContext(env: NodeJS.ProcessEnv): Context {
  const carrier: Record<string, string> = {};
  if (env.TRACEPARENT) carrier.traceparent = env.TRACEPARENT.trim();
  if (env.TRACESTATE) carrier.tracestate = env.TRACESTATE.trim();
  return new W3CTraceContextPropagator().extract(ROOT_CONTEXT, carrier, {
    get: (c, key) => c[key],
    keys: (c) => Object.keys(c),
  });
}

/** Exports the trace; returns what went wrong, in words for stderr, or null. Never throws. */
export async function exportTrace(
  roots: PlannedSpan[],
  settings: TraceSettings,
  env: NodeJS.ProcessEnv,
): Promise<string | null> {
  if (roots.length === 0) return null;
  try {
    const memory = new InMemorySpanExporter();
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ "service.name": "oc-exec", "service.version": VERSION }).merge(
        detectResources({ detectors: [envDetector] }),
      ),
      spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
    });
    const tracer = provider.getTracer(SCOPE, VERSION);
    const emit = (planned: PlannedSpan, parent: Context) => {
      const made: Span = tracer.startSpan(
        planned.name,
        {
          kind: planned.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
          startTime: planned.startMs,
          attributes: planned.attributes,
        },
        parent,
      );
      for (const event of planned.events) made.addEvent(event.name, event.attributes, event.timeMs);
      if (planned.error !== null) made.setStatus({ code: SpanStatusCode.ERROR, message: planned.error });
      for (const child of planned.children) emit(child, trace.setSpan(parent, made));
      made.end(Math.max(planned.endMs, planned.startMs));
    };
    // No context manager: every parent is passed explicitly, nothing depends on async context.
    for (const root of roots) emit(root, parentContext(env));
    const exporter = await makeExporter(settings);
    const spans = memory.getFinishedSpans();
    const outcome = await new Promise<string | null>((resolve) => {
      const timer = setTimeout(
        () => resolve(`no answer from the collector within ${settings.flushTimeoutMs / 1000}s`),
        settings.flushTimeoutMs,
      );
      exporter.export(spans, (result) => {
        clearTimeout(timer);
        resolve(result.code === ExportResultCode.SUCCESS ? null : (result.error?.message ?? "the export failed"));
      });
    });
    // Whatever the answer, nothing of the exporter may keep the process alive.
    void exporter.shutdown().catch(() => {});
    await provider.shutdown().catch(() => {});
    return outcome === null ? null : `traces not exported: ${outcome}`;
  } catch (error) {
    return `traces not exported: ${(error as Error).message}`;
  }
}

async function makeExporter(settings: TraceSettings) {
  // The exporter reads its endpoint, headers and the rest from the standard OTEL_* variables.
  const config = { timeoutMillis: settings.flushTimeoutMs };
  // Both are CommonJS packages: loaded from the CLI's bundle, their exports sit under `default`.
  type ExporterModule = typeof import("@opentelemetry/exporter-trace-otlp-proto");
  const named = (module: ExporterModule & { default?: ExporterModule }) =>
    module.OTLPTraceExporter ?? module.default!.OTLPTraceExporter;
  const Exporter = named(
    settings.protocol === "http/json"
      ? await import("@opentelemetry/exporter-trace-otlp-http")
      : await import("@opentelemetry/exporter-trace-otlp-proto"),
  );
  return new Exporter(config);
}
