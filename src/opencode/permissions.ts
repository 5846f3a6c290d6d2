// --allow and --deny become OPENCODE_PERMISSION. An allow-list makes each listed key `allow` and
// every other known key `deny`; --deny overrides; a key in both lists is a usage error.
import { ConfigError } from "../outcome/errors.js";

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

export type Policy = { value: Record<string, "allow" | "deny">; warnings: { code: string; message: string }[] };

export function splitList(values: string[]): string[] {
  return values
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** null when neither list is given: the user's own opencode permission config stays in charge. */
export function buildPolicy(allow: string[], deny: string[]): Policy | null {
  if (allow.length === 0 && deny.length === 0) return null;
  const both = allow.filter((k) => deny.includes(k));
  if (both.length > 0) throw new ConfigError(`${both.join(", ")} is in both --allow and --deny`, "UsageError");
  const known = new Set<string>(PERMISSION_KEYS);
  const warnings = [...allow, ...deny]
    .filter((k) => !known.has(k))
    .map((k) => ({
      code: "unknown_permission",
      message: `${k} is not a permission key oc-exec knows (${PERMISSION_KEYS.join(", ")}); passed to opencode as given`,
    }));
  const value: Record<string, "allow" | "deny"> = {};
  if (allow.length > 0) for (const key of PERMISSION_KEYS) value[key] = "deny";
  for (const key of allow) value[key] = "allow";
  for (const key of deny) value[key] = "deny";
  return { value, warnings };
}
