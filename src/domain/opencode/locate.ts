// Finds the opencode binary: an explicit path (--opencode or OC_EXEC_OPENCODE), else the bundled
// npm dependency, else PATH. The bundled package hard-links its native binary at install time;
// when install scripts were skipped we fall back to the platform package that ships it.
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join, resolve } from "node:path";

export type Located = { path: string; source: "explicit" | "bundled" | "path"; packageVersion: string | null };
export type LocateResult = { ok: true; binary: Located } | { ok: false; path: string | null; message: string };

const require = createRequire(import.meta.url);

function packageDir(name: string): string | null {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    return null;
  }
}

function packageVersion(dir: string): string | null {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : null;
  } catch {
    return null;
  }
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function bundledBinary(): Located | null {
  const dir = packageDir("opencode-ai");
  if (!dir) return null;
  const version = packageVersion(dir);
  // The platform package holds the real binary whether or not opencode-ai's postinstall ran
  // (without it, opencode-ai/bin/opencode.exe is a 479-byte placeholder).
  const platformRequire = createRequire(join(dir, "package.json"));
  for (const variant of ["", "-baseline", "-musl", "-baseline-musl"]) {
    let platformDir: string | null = null;
    try {
      platformDir = dirname(
        platformRequire.resolve(`opencode-${process.platform}-${process.arch}${variant}/package.json`),
      );
    } catch {
      platformDir = packageDir(`opencode-${process.platform}-${process.arch}${variant}`);
    }
    const candidate = platformDir ? join(platformDir, "bin", "opencode") : null;
    if (candidate && isExecutableFile(candidate))
      return { path: candidate, source: "bundled", packageVersion: version };
  }
  const linked = join(dir, "bin", "opencode.exe");
  if (isExecutableFile(linked) && statSync(linked).size > 1024 * 1024)
    return { path: linked, source: "bundled", packageVersion: version };
  return null;
}

export function searchPath(name: string, pathEnv: string | undefined): string | null {
  for (const dir of (pathEnv ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

export function locateOpencode(explicit: string | null | undefined, pathEnv: string | undefined): LocateResult {
  if (explicit) {
    if (!existsSync(explicit))
      return { ok: false, path: explicit, message: `opencode binary not found at ${explicit}` };
    if (!isExecutableFile(explicit))
      return { ok: false, path: explicit, message: `${explicit} is not an executable file` };
    // Absolute: opencode runs in the workspace, where a path relative to here would not resolve.
    return { ok: true, binary: { path: resolve(explicit), source: "explicit", packageVersion: null } };
  }
  const bundled = bundledBinary();
  if (bundled) return { ok: true, binary: bundled };
  const onPath = searchPath("opencode", pathEnv);
  if (onPath) return { ok: true, binary: { path: onPath, source: "path", packageVersion: null } };
  return {
    ok: false,
    path: null,
    message:
      "no opencode binary found: the opencode-ai dependency is not installed and opencode is not on PATH. Run `npm install`, or pass --opencode PATH",
  };
}
