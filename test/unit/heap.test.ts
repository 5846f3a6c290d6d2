// The CLI's cap on V8's young generation (src/cli/heap.ts), in a fresh Node process each time:
// the flag it sets is process-wide, and V8's growth depends on the whole process's history.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const workload = fileURLToPath(new URL("../support/young-generation.ts", import.meta.url));
const MB = 1024 * 1024;

async function youngGenerationAfterWorkload(cap: boolean): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    "--import",
    "tsx",
    workload,
    ...(cap ? ["cap"] : []),
  ]);
  return Number(stdout.trim());
}

describe("capYoungGeneration", () => {
  it("stops the young generation at 4 MB where V8 would grow it further, and lets the process exit", async () => {
    // Without the cap the same workload grows it past 4 MB (32 MB on Node 20): the test can fail.
    expect(await youngGenerationAfterWorkload(false)).toBeGreaterThan(4 * MB);
    expect(await youngGenerationAfterWorkload(true)).toBe(4 * MB);
  });
});
