// Extra opencode configuration without touching the user's repository: --config FILE.json and
// --mcp NAME=COMMAND ARGS are deep-merged into OPENCODE_CONFIG_CONTENT, over any inherited value.
import { readFileSync } from "node:fs";
import { ConfigError } from "../outcome/errors.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function deepMerge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [key, value] of Object.entries(over))
    out[key] = isObj(out[key]) && isObj(value) ? deepMerge(out[key], value) : value;
  return out;
}

/** Splits a command line on spaces, keeping "quoted" and 'quoted' words whole. */
export function splitCommand(text: string): string[] {
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(text); m; m = re.exec(text))
    words.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3]!));
  return words;
}

export function parseMcp(spec: string): Obj {
  const eq = spec.indexOf("=");
  const name = spec.slice(0, eq).trim();
  const command = splitCommand(spec.slice(eq + 1));
  if (eq <= 0 || !/^[A-Za-z0-9_-]+$/.test(name) || command.length === 0) {
    throw new ConfigError(`--mcp takes NAME=COMMAND [ARGS...], not ${JSON.stringify(spec)}`, "UsageError");
  }
  return { mcp: { [name]: { type: "local", command, enabled: true } } };
}

export function readConfigFile(path: string): Obj {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ConfigError(
      `--config ${path}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`,
      "UsageError",
    );
  }
  if (!isObj(value)) throw new ConfigError(`--config ${path}: not a JSON object`, "UsageError");
  return value;
}

/** The merged OPENCODE_CONFIG_CONTENT, or undefined when there is nothing to add. */
export function mergeConfigContent(inherited: string | undefined, extras: Obj[]): string | undefined {
  if (extras.length === 0) return inherited;
  let base: Obj = {};
  if (inherited) {
    try {
      const parsed: unknown = JSON.parse(inherited);
      if (isObj(parsed)) base = parsed;
    } catch {
      throw new ConfigError(
        "the inherited OPENCODE_CONFIG_CONTENT is not valid JSON, so --config/--mcp cannot be merged into it",
        "UsageError",
      );
    }
  }
  return JSON.stringify(extras.reduce(deepMerge, base));
}
