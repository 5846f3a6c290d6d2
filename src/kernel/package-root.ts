// oc-exec's own package: its directory and version. The same code runs from src/ (tests), dist/
// (the library) and a bundle chunk under dist/bin/ (the CLI), so the package is found by walking
// up to the package.json named oc-exec rather than by a fixed relative path.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type OwnPackage = { dir: string; version: string };

function findOwnPackage(): OwnPackage | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "oc-exec") return { dir, version: pkg.version ?? "0.0.0" };
    } catch {
      // No package.json here (or an unreadable one): keep walking.
    }
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

let found: OwnPackage | null | undefined;

/** The package this file belongs to (looked up once); null when no package.json above it is oc-exec's. */
export function ownPackage(): OwnPackage | null {
  if (found === undefined) found = findOwnPackage();
  return found;
}
