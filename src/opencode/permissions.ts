// --allow and --deny become OPENCODE_PERMISSION. An allow-list makes each listed key `allow` and
// every other known key `deny`; --deny overrides; a key in both lists is a usage error.
import type { WarningCode } from "../contract/warning-codes.js";
import { ConfigError } from "../outcome/errors.js";
import type { OptionLabels } from "../outcome/labels.js";

export const PERMISSION_KEYS = [
  "bash",
  "codesearch",
  "doom_loop",
  "edit",
  "external_directory",
  "glob",
  "grep",
  "list",
  "lsp",
  "question",
  "read",
  "skill",
  "task",
  "todowrite",
  "webfetch",
  "websearch",
] as const;

export type Policy = { value: Record<string, "allow" | "deny">; warnings: { code: WarningCode; message: string }[] };

export function splitList(values: string[]): string[] {
  return values
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** null when neither list is given: the user's own opencode permission config stays in charge. */
export function buildPolicy(
  allow: string[],
  deny: string[],
  labels: Pick<OptionLabels, "allow" | "deny">,
): Policy | null {
  if (allow.length === 0 && deny.length === 0) return null;
  const both = allow.filter((k) => deny.includes(k));
  if (both.length > 0)
    throw new ConfigError(`${both.join(", ")} is in both ${labels.allow} and ${labels.deny}`, "UsageError");
  const known = new Set<string>(PERMISSION_KEYS);
  const warnings = [...allow, ...deny]
    .filter((k) => !known.has(k))
    .map((k) => ({
      code: "unknown_permission" as const,
      message: `${k} is not a permission key oc-exec knows (${PERMISSION_KEYS.join(", ")}); passed to opencode as given`,
    }));
  const value: Record<string, "allow" | "deny"> = {};
  if (allow.length > 0) for (const key of PERMISSION_KEYS) value[key] = "deny";
  for (const key of allow) value[key] = "allow";
  for (const key of deny) value[key] = "deny";
  return { value, warnings };
}

/**
 * An inherited OPENCODE_PERMISSION that is not a JSON object: opencode silently ignores it and
 * runs with no restriction, so the user's intent to restrict tools would fail open. Returns why.
 */
export function invalidInheritedPolicy(value: string | undefined): string | null {
  if (value === undefined || value.trim() === "") return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    return `OPENCODE_PERMISSION is not valid JSON (${(error as Error).message}); opencode would ignore it and run every tool unrestricted`;
  }
  if (typeof parsed === "string" && ["allow", "ask", "deny"].includes(parsed)) return null;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return "OPENCODE_PERMISSION must be a JSON object of permission key to allow, ask or deny; opencode would ignore it and run every tool unrestricted";
  return null;
}
