// Renders the published JSON Schema from the zod source of truth. Used by the generator script,
// by `oc-exec schema`, and by the staleness test.
//
// The zod schemas are strict: oc-exec's own tests reject any field the schema does not declare,
// so the contract cannot drift silently. The published document follows the compatibility policy
// (README, "Schema compatibility") instead: objects are open and unknown event types are allowed,
// so a consumer who validates with it keeps working when a minor release adds a field or an event.
import { z } from "zod";
import { EventSchema, SCHEMA_VERSION } from "./schema.js";

type Json = Record<string, unknown>;

/** Drops every `additionalProperties: false`: fields may be added within a schema version. */
function openObjects(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(openObjects);
  if (value === null || typeof value !== "object") return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === "additionalProperties" && v === false) continue;
    out[key] = openObjects(v);
  }
  return out;
}

function buildJsonSchema(): Json {
  const generated = openObjects(
    z.toJSONSchema(EventSchema, { target: "draft-2020-12", unrepresentable: "any" }),
  ) as Json & { oneOf: Json[]; $defs: Json };
  const known = EventSchema.options.map((o) => o.shape.type.value);
  // An event type this version does not know: the envelope every event has, and nothing else.
  const futureEvent = {
    description: "An event type added after this schema was published. Consumers skip event types they do not know.",
    type: "object",
    properties: {
      type: { type: "string", not: { enum: known } },
      seq: { type: "integer", minimum: 0 },
      time: { $ref: "#/$defs/Timestamp" },
      session_id: { $ref: "#/$defs/SessionId" },
    },
    required: ["type", "seq", "time", "session_id"],
  };
  const { $schema: _, ...rest } = generated;
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: `https://oc-exec.dev/schemas/oc-exec-events.v${SCHEMA_VERSION}.schema.json`,
    title: `oc-exec event (schema version ${SCHEMA_VERSION})`,
    description:
      "One line of oc-exec's JSONL output on stdout. Within a schema version, fields and event types may be added; nothing is removed, renamed or retyped.",
    ...rest,
    oneOf: [...generated.oneOf, { $ref: "#/$defs/FutureEvent" }],
    $defs: { ...generated.$defs, FutureEvent: futureEvent },
  };
}

export function renderJsonSchema(): string {
  return `${JSON.stringify(buildJsonSchema(), null, 2)}\n`;
}
