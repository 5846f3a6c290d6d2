// --junit FILE: checked before anything runs (a path that cannot be written is exit 5 then, not a
// lost report later), and written once the stream's last line is out, whatever ended the run.
import { accessSync, constants, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { OcEvent } from "../contract/schema.js";
import { ConfigError } from "../outcome/errors.js";
import { JunitCollector, renderJunit } from "./junit.js";

export type JunitReport = { observe(event: OcEvent): void; write(): string | null };

/** A report for this path, or a ConfigError saying why it cannot be written. */
export function openJunitReport(path: string, suiteName: string, label = "--junit"): JunitReport {
  const file = resolve(path);
  const dir = dirname(file);
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
  try {
    if (statSync(file).isDirectory()) throw new ConfigError(`${label} ${path} is a directory`, "UsageError");
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    // Not there yet: it will be.
  }
  const collector = new JunitCollector(suiteName);
  return {
    observe: (event) => collector.observe(event),
    write() {
      try {
        const temp = `${file}.${process.pid}.tmp`;
        writeFileSync(temp, renderJunit(collector.suite()));
        renameSync(temp, file);
        return null;
      } catch (error) {
        return `${label} ${path} could not be written: ${(error as Error).message}`;
      }
    },
  };
}
