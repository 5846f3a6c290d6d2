// The one rule for tests that need the sandbox: on a machine without it they are skipped, loudly,
// in the test output, saying why; with CI set they run (and fail) instead, since CI installs what
// the sandbox needs (.ci/run).
import { sandboxUnavailable } from "../../src/hosts/sandbox/sandbox.js";

export async function sandboxSkip(what: string): Promise<{ unavailable: string | null; skip: boolean }> {
  const unavailable = await sandboxUnavailable(process.env);
  const skip = unavailable !== null && !process.env.CI;
  if (skip) console.warn(`\n*** SKIPPED: ${what}: ${unavailable} ***\n`);
  return { unavailable, skip };
}
