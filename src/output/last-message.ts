// --output-last-message FILE and --output-patch FILE: written atomically (a temporary file in the
// same directory, then a rename), so a reader never sees half a message or half a patch.
import { renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export function writeFileAtomic(path: string, text: string | Uint8Array): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}
