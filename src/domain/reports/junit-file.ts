// --junit FILE: checked before anything runs (a path that cannot be written is exit 5 then, not a
// lost report later), and written once the stream's last line is out, whatever ended the run,
// through the safe writer: a link planted at the path during the turn is refused, never followed.
import { accessSync, constants, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { OcEvent } from "../../contract/schema.js";
import { planWrite, type WriteProblem, writePlanned } from "../../sys/safe-write.js";
import { ConfigError } from "../outcome/errors.js";
import { JunitCollector, renderJunit } from "./junit.js";

export type JunitReport = { observe(event: OcEvent): void; write(): WriteProblem | null };

/** A report for this path, or a ConfigError saying why it cannot be written. */
export function openJunitReport(path: string, suiteName: string, label = "--junit"): JunitReport {
  const dir = dirname(resolve(path));
  try {
    if (!statSync(dir).isDirectory())
      throw new ConfigError(`${label} ${path}: ${dir} is not a directory`, "UsageError");
    accessSync(dir, constants.W_OK);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(
      `${label} ${path}: cannot write in ${dir} (${(error as NodeJS.ErrnoException).code ?? error})`,
      "UsageError",
    );
  }
  // A directory at the path, or a link (even one that was there before the run: see sys/safe-write.ts).
  const plan = planWrite(path);
  if ("problem" in plan) throw new ConfigError(`${label} ${path}: ${plan.problem}`, "UsageError");
  const collector = new JunitCollector(suiteName);
  return {
    observe: (event) => collector.observe(event),
    write() {
      const failed = writePlanned(plan, renderJunit(collector.suite()));
      if (!failed) return null;
      return {
        refused: failed.refused,
        problem: failed.refused
          ? `${label} ${path} was not written: ${failed.problem}`
          : `${label} ${path} could not be written: ${failed.problem}`,
      };
    },
  };
}
