// Renders the published JSON Schema from the zod source of truth. Used by the generator script,
// by `oc-exec schema`, and by the staleness test.
import { z } from "zod";
import { EventSchema, SCHEMA_VERSION } from "./schema.js";

export function buildJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(EventSchema, { target: "draft-2020-12", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: `https://oc-exec.dev/schemas/oc-exec-events.v${SCHEMA_VERSION}.schema.json`,
    title: `oc-exec event (schema version ${SCHEMA_VERSION})`,
    description: "One line of oc-exec's JSONL output on stdout.",
    ...Object.fromEntries(Object.entries(generated).filter(([key]) => key !== "$schema")),
  };
}

export function renderJsonSchema(): string {
  return `${JSON.stringify(buildJsonSchema(), null, 2)}\n`;
}
