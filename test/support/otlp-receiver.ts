// A real OTLP/HTTP trace receiver on loopback for the tests: it decodes what the exporter sends with
// the OpenTelemetry protocol's own definitions (opentelemetry-proto, compiled by protobufjs, as
// published in @opentelemetry/otlp-transformer 0.57), or reads OTLP/JSON, and keeps the spans with
// their resource and scope. The OpenTelemetry Collector is not installable from the registries the
// CI machines reach; this decodes the same messages a collector would.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
type Decoder = { decode(buffer: Uint8Array): unknown };
type ProtoRoot = {
  opentelemetry: {
    proto: {
      collector: {
        trace: { v1: { ExportTraceServiceRequest: Decoder & { toObject(m: unknown, o: object): unknown } } };
      };
    };
  };
};
const root = require("otlp-proto-definitions/build/src/generated/root.js") as ProtoRoot;
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export type ReceivedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  status: { code: number; message: string };
  events: { name: string; attributes: Record<string, unknown> }[];
  scope: string;
  resource: Record<string, unknown>;
};

export type OtlpReceiver = {
  url: string;
  spans: ReceivedSpan[];
  /** The requests' headers, in order. */
  headers: Record<string, string | string[] | undefined>[];
  /** What the next requests get: 200, or an HTTP error, or no answer at all. */
  answer: "ok" | 500 | "never";
  close(): Promise<void>;
};

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
const plainValue = (v: AnyValue): unknown =>
  v.stringValue ??
  (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
  v.doubleValue ??
  v.boolValue ??
  v.arrayValue?.values?.map(plainValue);
const attributesOf = (list: { key: string; value: AnyValue }[] | undefined) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, plainValue(a.value)]));
const hex = (bytes: unknown) =>
  typeof bytes === "string" ? bytes : bytes ? Buffer.from(bytes as Uint8Array).toString("hex") : "";
const millis = (nanos: unknown) => Number(BigInt(String(nanos ?? 0)) / 1_000_000n);

type Request = {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: unknown;
        spanId: unknown;
        parentSpanId?: unknown;
        name: string;
        kind?: number;
        startTimeUnixNano: unknown;
        endTimeUnixNano: unknown;
        attributes?: { key: string; value: AnyValue }[];
        status?: { code?: number; message?: string };
        events?: { name: string; attributes?: { key: string; value: AnyValue }[] }[];
      }[];
    }[];
  }[];
};

function spansOf(request: Request): ReceivedSpan[] {
  const found: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        found.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: s.name,
          kind: s.kind ?? 0,
          startMs: millis(s.startTimeUnixNano),
          endMs: millis(s.endTimeUnixNano),
          attributes: attributesOf(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
          scope: ss.scope?.name ?? "",
          resource,
        });
  }
  return found;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const pending: ServerResponse[] = [];
  const receiver = { spans: [], headers: [], answer: "ok" } as unknown as OtlpReceiver;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      receiver.headers.push(req.headers);
      if (receiver.answer === "never") {
        pending.push(res);
        return;
      }
      if (receiver.answer === 500) {
        res.writeHead(500).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const json = String(req.headers["content-type"]).includes("json");
      const request = json
        ? (JSON.parse(body.toString("utf8")) as Request)
        : (ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), {
            longs: String,
            bytes: Buffer,
          }) as Request);
      receiver.spans.push(...spansOf(request));
      res
        .writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" })
        .end(json ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  receiver.close = async () => {
    for (const res of pending) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
