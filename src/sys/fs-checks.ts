// Why a path the user named cannot be used, or null when it can: checked before anything runs.
import { accessSync, constants, statSync } from "node:fs";
import { dirname } from "node:path";

export function notADirectory(path: string): string | null {
  try {
    return statSync(path).isDirectory() ? null : "is not a directory";
  } catch {
    return "does not exist";
  }
}

export function notAFile(path: string): string | null {
  try {
    return statSync(path).isFile() ? null : "is not a file";
  } catch {
    return "does not exist";
  }
}

/** Why a file cannot be written (its directory missing or not writable, itself a directory), or null. */
export function unwritableFile(path: string): string | null {
  const dir = dirname(path);
  const dirProblem = notADirectory(dir);
  if (dirProblem) return `the directory ${dir} ${dirProblem}`;
  try {
    accessSync(dir, constants.W_OK);
  } catch (error) {
    return `cannot write in ${dir} (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  try {
    if (statSync(path).isDirectory()) return "is a directory";
  } catch {
    // Not there yet: it will be.
  }
  return null;
}
