// Why a path the user named cannot be used, or null when it can: checked before anything runs.
import { statSync } from "node:fs";

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
