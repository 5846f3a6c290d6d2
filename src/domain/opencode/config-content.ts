// Extra opencode configuration without touching the user's repository: configuration objects
// are deep-merged into OPENCODE_CONFIG_CONTENT, over any inherited value. Merged once, while
// planning (plan/resolve-options.ts); every host reads the plan's answer.
import type { LaunchProblem } from "../../kernel/problem.js";

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function deepMerge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [key, value] of Object.entries(over))
    out[key] = isObj(out[key]) && isObj(value) ? deepMerge(out[key], value) : value;
  return out;
}

/** What opencode is given as OPENCODE_CONFIG_CONTENT (undefined: nothing), or why it cannot be made. */
export type ConfigContent = { content: string | undefined } | { problem: LaunchProblem };

/** The merged OPENCODE_CONFIG_CONTENT, or the inherited one when there is nothing to add. */
export function mergeConfigContent(inherited: string | undefined, extras: Obj[], label: string): ConfigContent {
  if (extras.length === 0) return { content: inherited };
  let base: Obj = {};
  if (inherited) {
    try {
      const parsed: unknown = JSON.parse(inherited);
      if (isObj(parsed)) base = parsed;
    } catch {
      return {
        problem: {
          name: "UsageError",
          message: `the inherited OPENCODE_CONFIG_CONTENT is not valid JSON, so ${label} cannot be merged into it`,
        },
      };
    }
  }
  return { content: JSON.stringify(extras.reduce(deepMerge, base)) };
}
