import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderJsonSchema } from "../../src/contract/json-schema.js";

describe("schemas/oc-exec-events.schema.json", () => {
  it("is what the zod schemas generate (run `npm run schema` after changing them)", () => {
    const committed = readFileSync(new URL("../../schemas/oc-exec-events.schema.json", import.meta.url), "utf8");
    expect(committed).toBe(renderJsonSchema());
  });
});
