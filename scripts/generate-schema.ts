// Writes schemas/oc-exec-events.schema.json from the zod schemas. test/unit/schema-fresh.test.ts
// fails when the committed file differs from what this prints.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderJsonSchema } from "../src/contract/json-schema.js";

const target = fileURLToPath(new URL("../schemas/oc-exec-events.schema.json", import.meta.url));
writeFileSync(target, renderJsonSchema());
process.stderr.write(`wrote ${target}\n`);
