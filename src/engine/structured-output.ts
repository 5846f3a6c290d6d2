// Structured output: tell the model what shape the final answer must have, then find the JSON in
// the answer (plain, or in a fenced block) and validate it with ajv.
import { createRequire } from "node:module";

/** The plan's --output-schema whole, so a schema is never mistaken for the value that carries it. */
export function schemaInstruction({ schema }: { schema: object; option: string }): string {
  return [
    "",
    "",
    "Your final answer must be a single JSON value that satisfies the JSON Schema below, with nothing before or after it (a ```json fenced block is fine).",
    "```json",
    JSON.stringify(schema, null, 2),
    "```",
  ].join("\n");
}

/** The JSON value in an answer: the whole text, else the last fenced block, else the outermost braces. */
export function extractJson(text: string): { value: unknown } | null {
  const attempts: string[] = [text.trim()];
  const fences = [...text.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
  attempts.push(...fences.reverse());
  for (const [open, close] of [
    ["{", "}"],
    ["[", "]"],
  ] as const) {
    const a = text.indexOf(open);
    const b = text.lastIndexOf(close);
    if (a !== -1 && b > a) attempts.push(text.slice(a, b + 1));
  }
  for (const candidate of attempts) {
    try {
      return { value: JSON.parse(candidate) as unknown };
    } catch {
      // next
    }
  }
  return null;
}

type Validator = ((value: unknown) => boolean) & { errors?: { instancePath: string; message?: string }[] | null };

/** Why the schema cannot check an answer (it does not compile), or null: asked before the turn. */
export function outputSchemaProblem(schema: object): string | null {
  try {
    compile(schema);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

function validateAgainst(schema: object, value: unknown): string[] {
  const validate = compile(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}`);
}

function compile(schema: object): Validator {
  // ajv is loaded only when --output-schema is used.
  const require = createRequire(import.meta.url);
  const draft2020 = (schema as { $schema?: string }).$schema?.includes("2020-12");
  const Ajv = (
    require(draft2020 ? "ajv/dist/2020" : "ajv") as { default: new (o: object) => { compile(s: object): Validator } }
  ).default;
  const ajv = new Ajv({ allErrors: true, strict: false });
  (require("ajv-formats") as { default: (a: unknown) => void }).default(ajv);
  return ajv.compile(schema);
}

export type StructuredCheck = { value: unknown } | { error: string };

export function checkStructuredOutput(schema: object, text: string | null, label: string): StructuredCheck {
  if (text === null) return { error: `the turn produced no final message to check against ${label}` };
  const found = extractJson(text);
  if (!found) return { error: `the final message contains no JSON value (${label})` };
  const problems = validateAgainst(schema, found.value);
  return problems.length === 0
    ? { value: found.value }
    : { error: `the final message does not match ${label}: ${problems.join("; ")}` };
}
