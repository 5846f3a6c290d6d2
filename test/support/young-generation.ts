// A stream-like workload for test/unit/heap.test.ts: each "line" is parsed and re-serialized, and
// the last 2,000 survive a while, as pending events do. Prints the young generation's final size.
//   node --import tsx test/support/young-generation.ts [cap]
import { getHeapSpaceStatistics } from "node:v8";
import { capYoungGeneration } from "../../src/cli/heap.js";

if (process.argv[2] === "cap") capYoungGeneration();
const recent: unknown[] = new Array(2000);
let n = 0;
for (let chunk = 0; chunk < 400; chunk++) {
  for (let k = 0; k < 500; k++, n++)
    recent[n % recent.length] = JSON.parse(JSON.stringify({ type: "text", text: "x".repeat(200), n }));
  // Between chunks, as between reads from opencode's stdout: lets the GC observer run.
  await new Promise((resolve) => setImmediate(resolve));
}
const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === "new_space")!.space_size;
process.stdout.write(`${newSpace}\n`);
