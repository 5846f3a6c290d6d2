// The opencode version, detected once per binary. `opencode --version` costs over a second (a
// 185 MB binary starting up), so the answer is cached per path, size and mtime; the bundled
// dependency's version is read from its package.json for free.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Located } from "./locate.js";

type Cache = Record<string, { size: number; mtimeMs: number; version: string }>;

export function versionCacheFile(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(base, "oc-exec", "opencode-versions.json");
}

function readCache(file: string): Cache {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Cache;
  } catch {
    return {};
  }
}

export function parseVersionOutput(text: string): string | null {
  const m = /(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(text);
  return m ? m[1]! : null;
}

function runVersion(path: string, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(path, ["--version"], { timeout: timeoutMs, encoding: "utf8" }, (error, stdout) => {
      resolve(error ? null : parseVersionOutput(stdout));
    });
  });
}

export async function detectVersion(binary: Located, env: NodeJS.ProcessEnv, timeoutMs = 10_000): Promise<string | null> {
  if (binary.packageVersion) return binary.packageVersion;
  let stat;
  try {
    stat = statSync(binary.path);
  } catch {
    return null;
  }
  const file = versionCacheFile(env);
  const cache = readCache(file);
  const hit = cache[binary.path];
  if (hit && hit.size === stat.size && hit.mtimeMs === stat.mtimeMs) return hit.version;
  const version = await runVersion(binary.path, timeoutMs);
  if (version) {
    try {
      cache[binary.path] = { size: stat.size, mtimeMs: stat.mtimeMs, version };
      mkdirSync(join(file, ".."), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(cache));
      renameSync(tmp, file);
    } catch {
      // A read-only cache only costs the next run another --version call.
    }
  }
  return version;
}
