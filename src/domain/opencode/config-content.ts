// Extra opencode configuration without touching the user's repository: configuration objects
// are deep-merged into OPENCODE_CONFIG_CONTENT, over any inherited value.
import { ConfigError } from "../outcome/errors.js";

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function deepMerge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [key, value] of Object.entries(over))
    out[key] = isObj(out[key]) && isObj(value) ? deepMerge(out[key], value) : value;
  return out;
}

/** The merged OPENCODE_CONFIG_CONTENT, or undefined when there is nothing to add. */
export function mergeConfigContent(inherited: string | undefined, extras: Obj[], label: string): string | undefined {
  if (extras.length === 0) return inherited;
  let base: Obj = {};
  if (inherited) {
    try {
      const parsed: unknown = JSON.parse(inherited);
      if (isObj(parsed)) base = parsed;
    } catch {
      throw new ConfigError(
        `the inherited OPENCODE_CONFIG_CONTENT is not valid JSON, so ${label} cannot be merged into it`,
        "UsageError",
      );
    }
  }
  return JSON.stringify(extras.reduce(deepMerge, base));
}
