// Every line an end-to-end test sees is checked twice: with an independent JSON Schema validator
// (ajv, against the published schemas/ file) and with the contract checker (zod, seq, result).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { OcEvent } from "../../src/contract/schema.js";
import { validateStream } from "../../src/contract/validate-stream.js";

const schema = JSON.parse(
  readFileSync(new URL("../../schemas/oc-exec-events.schema.json", import.meta.url), "utf8"),
) as object;
// ajv and ajv-formats are CommonJS; require() sidesteps their default-export interop under NodeNext.
const require = createRequire(import.meta.url);
const Ajv2020 = (require("ajv/dist/2020") as { default: typeof import("ajv").default }).default;
const addFormats = (require("ajv-formats") as { default: typeof import("ajv-formats").default }).default;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
/** The published schema, compiled by an independent validator. */
export const validate = ajv.compile(schema);
export const PUBLISHED_SCHEMA = schema;

export function checkStream(stdout: string): OcEvent[] {
  const lines = stdout.split("\n");
  if (lines[lines.length - 1] !== "")
    throw new Error(`stdout does not end with a newline: ${JSON.stringify(stdout.slice(-200))}`);
  for (const [i, line] of lines.slice(0, -1).entries()) {
    if (!validate(JSON.parse(line))) {
      throw new Error(
        `line ${i + 1} fails the published JSON Schema (ajv): ${ajv.errorsText(validate.errors)}\n${line}`,
      );
    }
  }
  const { events, problems } = validateStream(lines);
  if (problems.length > 0)
    throw new Error(
      `stream contract broken:\n${problems.map((p) => `line ${p.line}: ${p.message}`).join("\n")}\n${stdout}`,
    );
  return events;
}
