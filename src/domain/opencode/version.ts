// The opencode version and feature set, detected once per binary. `opencode --version` costs
// over a second (a large binary starting up), so answers are cached per path, size and mtime;
// the bundled dependency's version is read from its package.json for free.
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { xdgHome } from "../../kernel/xdg.js";
import { writeFileSafely } from "../../sys/safe-write.js";
import { ALL_FEATURES, type Features, knownFeatures, majorOf, parseRunHelp, V2_FEATURES } from "./features.js";
import type { Located } from "./locate.js";
import { runSideCommand } from "./side-command.js";

export type Detected = { version: string | null; features: Features; tested: boolean };
type CacheEntry = { size: number; mtimeMs: number; stamp?: string; version: string | null; features: Features };
type Cache = Record<string, CacheEntry>;

function versionCacheFile(env: NodeJS.ProcessEnv): string {
  return join(xdgHome(env, "cache"), "oc-exec", "opencode-versions.json");
}

function readCache(file: string): Cache {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Cache;
  } catch {
    return {};
  }
}

function writeCache(file: string, cache: Cache): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
  } catch {
    // A read-only cache only costs the next run another detection.
  }
  // Not written (read-only, or a link at the path) likewise: the problem is not worth a word.
  writeFileSafely(file, JSON.stringify(cache));
}

function parseVersionOutput(text: string): string | null {
  const m = /(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(text);
  return m ? m[1]! : null;
}

/** Both streams of a side command, or null when it printed nothing and failed. */
async function ask(
  path: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<string | null> {
  const out = await runSideCommand(path, args, { env, timeoutMs, ownTmp: true, signal });
  return !out.ok && !out.stdout && !out.stderr ? null : `${out.stdout}\n${out.stderr}`;
}

/**
 * The binary's version and the flags its `run` takes: from its package, the cache, or by asking it
 * (`--version`, then `run --help` for a release oc-exec does not know), both within `timeoutMs` in
 * all. A binary that answers `--version` with nothing (hung, killed at the limit, or failing
 * silently) is not asked again.
 */
export async function detectOpencode(
  binary: Located,
  env: NodeJS.ProcessEnv,
  timeoutMs = 10_000,
  signal?: AbortSignal,
): Promise<Detected> {
  const fromPackage = binary.packageVersion;
  const known = knownFeatures(fromPackage);
  if (fromPackage && known) return { version: fromPackage, features: known, tested: true };
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(binary.path);
  } catch {
    return { version: fromPackage, features: ALL_FEATURES, tested: false };
  }
  const file = versionCacheFile(env);
  const cache = readCache(file);
  const hit = cache[binary.path];
  if (hit && hit.size === stat.size && hit.mtimeMs === stat.mtimeMs) {
    return { version: hit.version, features: hit.features, tested: knownFeatures(hit.version) !== null };
  }
  const deadline = Date.now() + timeoutMs;
  const answer = fromPackage ? null : await ask(binary.path, ["--version"], env, timeoutMs, signal);
  const version = fromPackage ?? parseVersionOutput(answer ?? "");
  let features = knownFeatures(version);
  const tested = features !== null;
  const left = deadline - Date.now();
  if (!features && (fromPackage || answer !== null) && left > 0 && !signal?.aborted) {
    const help = await ask(binary.path, ["run", "--help"], env, left, signal);
    features = help ? parseRunHelp(help) : (majorOf(version) ?? 0) >= 2 ? V2_FEATURES : ALL_FEATURES;
  }
  features ??= (majorOf(version) ?? 0) >= 2 ? V2_FEATURES : ALL_FEATURES;
  if (version) {
    cache[binary.path] = { size: stat.size, mtimeMs: stat.mtimeMs, version, features };
    writeCache(file, cache);
  }
  return { version, features, tested };
}

/**
 * A binary elsewhere (over ssh), known by a stamp of it (its path, size and time as `ls` shows
 * them): its version and features as learned before, or null. Same cache file as local binaries.
 */
export function cachedRemote(env: NodeJS.ProcessEnv, key: string, stamp: string): Omit<Detected, "tested"> | null {
  const hit = readCache(versionCacheFile(env))[key];
  return hit && hit.stamp === stamp ? { version: hit.version, features: hit.features } : null;
}

export function rememberRemote(
  env: NodeJS.ProcessEnv,
  key: string,
  stamp: string,
  found: Omit<Detected, "tested">,
): void {
  const file = versionCacheFile(env);
  const cache = readCache(file);
  cache[key] = { size: 0, mtimeMs: 0, stamp, ...found };
  writeCache(file, cache);
}
