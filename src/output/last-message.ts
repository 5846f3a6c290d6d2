// --output-last-message FILE: the final assistant message, written atomically (a temporary file
// in the same directory, then a rename), so a reader never sees half a message.
import { renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export function writeFileAtomic(path: string, text: string): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}
