// Runs the CLI and turns anything that escapes into exit status 70 with a message on stderr.
// (Bugs inside a turn are caught earlier and still produce a result line.)
import { EXIT_CODES } from "../contract/exit-codes.js";
import { capYoungGeneration } from "./heap.js";
import { main } from "./main.js";

export async function runMain(): Promise<number> {
  // stderr is for people. When its reader goes away (`oc-exec ... 2>&1 >out.jsonl | head`), the
  // failed writes surface as an 'error' event that would otherwise crash the process with status 1
  // mid-turn; the turn, its result line and its exit status must not depend on stderr.
  process.stderr.on("error", () => {});
  try {
    capYoungGeneration();
    return await main();
  } catch (error) {
    process.stderr.write(
      `oc-exec: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return EXIT_CODES.internal_error;
  }
}
