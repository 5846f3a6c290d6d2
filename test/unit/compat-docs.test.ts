// docs/compatibility.md's 2.x error table and the code's table say the same thing.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EXIT_CODES } from "../../src/contract/exit-codes.js";
import { V2_ERROR_TYPES } from "../../src/domain/events/error-class.js";

const doc = readFileSync(new URL("../../docs/compatibility.md", import.meta.url), "utf8");

describe("the per-release error table", () => {
  it("names every 2.x error type oc-exec maps, in the row of its class", () => {
    const rows = doc.split("\n").filter((l) => l.startsWith("| ") && /\| [a-z_]+ \(\d+\)\s*\|$/.test(l));
    for (const [type, cls] of Object.entries(V2_ERROR_TYPES)) {
      if (["aborted", "tool.execution", "unknown", "provider.error"].includes(type)) continue; // described in prose
      const row = rows.find((r) => r.includes(`\`${type}\``));
      expect(row, `${type} has a row`).toBeDefined();
      const cells = row!.split("|").map((c) => c.trim());
      expect(cells.at(-2), type).toBe(`${cls} (${EXIT_CODES[cls]})`);
    }
  });
});
