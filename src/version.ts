// oc-exec's own version, read once from oc-exec's package.json. The same code runs from src/
// (tests), dist/ (the library) and a bundle chunk under dist/bin/ (the CLI), so the file is
// found by walking up rather than by a fixed relative path.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function readVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "oc-exec") return pkg.version ?? "0.0.0";
    } catch {
      // No package.json here (or an unreadable one): keep walking.
    }
    const up = dirname(dir);
    if (up === dir) return "0.0.0";
    dir = up;
  }
}

export const VERSION = readVersion();
