// --allow and --deny become OPENCODE_PERMISSION. An allow-list makes each listed key `allow` and
// every other known key `deny`; --deny overrides; a key in both lists is a usage error.
import type { WarningCode } from "../../contract/warning-codes.js";
import type { LaunchProblem } from "../../kernel/problem.js";
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

type Action = "allow" | "deny";
export type Policy = {
  value: Record<string, Action | Record<string, Action>>;
  warnings: { code: WarningCode; message: string }[];
};

/**
 * The keys whose rules take patterns, and what a pattern matches: the command (bash), a file path
 * (edit, read, external_directory), a URL (webfetch), a subagent (task), a skill (skill). The other
 * keys are allowed or denied whole.
 */
const PATTERN_KEYS = ["bash", "edit", "read", "external_directory", "webfetch", "task", "skill"] as const;

export function splitList(values: string[]): string[] {
  return values
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
}

type Rule = { key: string; pattern: string | null };

/** `bash` or `bash:npm test` (the first colon separates, so a URL pattern keeps its own). */
function ruleOf(text: string): Rule {
  const colon = text.indexOf(":");
  return colon === -1 ? { key: text, pattern: null } : { key: text.slice(0, colon), pattern: text.slice(colon + 1) };
}

const show = (r: Rule) => (r.pattern === null ? r.key : `${r.key}:${r.pattern}`);

/**
 * --allow and --deny as OPENCODE_PERMISSION; null when neither is given (opencode's own config
 * stays in charge). The meaning, also in docs/usage.md:
 * - any --allow makes an allow-list: every known key it does not name is denied;
 * - `--allow KEY:PATTERN` allows those patterns of KEY and denies its other patterns;
 * - `--deny KEY:PATTERN` denies those patterns and wins over an allowed pattern that also matches;
 *   the key's other patterns keep what they had (allowed by --allow KEY, else opencode's config);
 * - a pattern on a key that takes none, or the same rule (or a denied key and its pattern) in
 *   both lists, is a usage error.
 * opencode applies the last matching rule, so each key's object lists "*" first, then the allowed
 * patterns, then the denied ones (checked against the real binary).
 */
export function buildPolicy(
  allow: string[],
  deny: string[],
  labels: Pick<OptionLabels, "allow" | "deny">,
): Policy | null | { problem: string } {
  if (allow.length === 0 && deny.length === 0) return null;
  const allowed = allow.map(ruleOf);
  const denied = deny.map(ruleOf);
  for (const r of [...allowed, ...denied]) {
    if (r.pattern === "") return { problem: `${r.key}: needs a pattern after the colon` };
    if (r.pattern !== null && !(PATTERN_KEYS as readonly string[]).includes(r.key))
      return {
        problem: `${r.key} takes no patterns (only ${PATTERN_KEYS.join(", ")} do): allow or deny the whole key`,
      };
  }
  const both = allowed.filter((a) =>
    denied.some((d) => d.key === a.key && (d.pattern === a.pattern || d.pattern === null)),
  );
  if (both.length > 0) return { problem: `${both.map(show).join(", ")} is in both ${labels.allow} and ${labels.deny}` };
  const known = new Set<string>(PERMISSION_KEYS);
  const warnings = [...new Set([...allowed, ...denied].map((r) => r.key))]
    .filter((k) => !known.has(k))
    .map((k) => ({
      code: "unknown_permission" as const,
      message: `${k} is not a permission key oc-exec knows (${PERMISSION_KEYS.join(", ")}); passed to opencode as given`,
    }));
  const wholeAllowed = new Set(allowed.filter((r) => r.pattern === null).map((r) => r.key));
  const value: Policy["value"] = {};
  if (allowed.length > 0) for (const key of PERMISSION_KEYS) value[key] = "deny";
  for (const key of wholeAllowed) value[key] = "allow";
  for (const r of denied) if (r.pattern === null) value[r.key] = "deny";
  const patterned = new Set([...allowed, ...denied].filter((r) => r.pattern !== null).map((r) => r.key));
  for (const key of patterned) {
    const allowedHere = allowed.filter((r) => r.key === key && r.pattern !== null).map((r) => r.pattern!);
    const deniedHere = denied.filter((r) => r.key === key && r.pattern !== null).map((r) => r.pattern!);
    // What the key's other patterns get: allowed whole, denied by an allow-list, else left to opencode.
    const rest: Action | null = wholeAllowed.has(key) ? "allow" : allowed.length > 0 ? "deny" : null;
    if (rest === "deny" && allowedHere.length === 0) continue; // denied whole already
    const rules: Record<string, Action> = rest ? { "*": rest } : {};
    for (const pattern of allowedHere) rules[pattern] = "allow";
    for (const pattern of deniedHere) rules[pattern] = "deny";
    value[key] = rules;
  }
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

export type PermissionRule = { permission: string; pattern: string; action: "allow" | "deny" | "ask" };

/**
 * A permission config (what OPENCODE_PERMISSION holds: a key's action, or its patterns' actions)
 * as a server session's ruleset. The order is kept: opencode applies the last matching rule, in
 * the ruleset as in the config. A bare action applies to every key. Values that are not actions
 * are left out, as opencode leaves them out.
 */
export function rulesetOf(value: unknown): PermissionRule[] {
  const isAction = (a: unknown): a is PermissionRule["action"] => a === "allow" || a === "deny" || a === "ask";
  if (isAction(value)) return [{ permission: "*", pattern: "*", action: value }];
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [];
  const rules: PermissionRule[] = [];
  for (const [permission, rule] of Object.entries(value)) {
    if (isAction(rule)) rules.push({ permission, pattern: "*", action: rule });
    else if (typeof rule === "object" && rule !== null && !Array.isArray(rule)) {
      for (const [pattern, action] of Object.entries(rule))
        if (isAction(action)) rules.push({ permission, pattern, action });
    }
  }
  return rules;
}

/**
 * The turn's permission policy, built once (in the plan): what OPENCODE_PERMISSION gets (null:
 * --allow/--deny were not given, the inherited value stands), the warnings it carries, and the keys
 * it takes away whole; or the problem the turn reports when it opens (a usage error in the lists,
 * an inherited value opencode would ignore).
 */
export type TurnPolicy =
  | { value: Policy["value"] | null; warnings: Policy["warnings"]; removed: ReadonlySet<string> }
  | { problem: LaunchProblem };

export function turnPolicy(
  allow: string[],
  deny: string[],
  inherited: string | undefined,
  labels: Pick<OptionLabels, "allow" | "deny">,
): TurnPolicy {
  const built = buildPolicy(allow, deny, labels);
  if (built !== null && "problem" in built) return { problem: { name: "UsageError", message: built.problem } };
  if (built === null) {
    const invalid = invalidInheritedPolicy(inherited);
    if (invalid) return { problem: { name: "PermissionConfigError", message: invalid } };
  }
  return {
    value: built?.value ?? null,
    warnings: built?.warnings ?? [],
    removed: removedKeys(built?.value ?? (inherited ? safeJson(inherited) : null)),
  };
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

/**
 * The permission keys a policy takes away whole: those --allow/--deny deny (an allow-list denies
 * every key it does not name), else those the inherited OPENCODE_PERMISSION denies ("*" when it
 * denies everything). opencode removes such a tool from what the model is offered, so a call to it
 * is the policy's refusal.
 */
function removedKeys(value: unknown): Set<string> {
  if (value === "deny") return new Set(["*"]);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return new Set();
  return new Set(Object.entries(value).flatMap(([key, action]) => (action === "deny" ? [key] : [])));
}

/** A rule's pattern against what a call touches: `*` is any run of characters, `?` any one; the rest literal. */
function wildcard(pattern: string, subject: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${source}$`, "s").test(subject);
}

/**
 * What a permission config (OPENCODE_PERMISSION's shape, as --allow/--deny build it) says of one
 * request: its key's action, or the last of the key's patterns that matches `subject` (what the
 * call touches: a command, a path, a URL), as opencode applies them; null when it says nothing.
 * How another agent's requests are answered from the same rules (hosts/acp/).
 */
export function policyAction(value: unknown, key: string, subject: string | null): PermissionRule["action"] | null {
  const isAction = (a: unknown): a is PermissionRule["action"] => a === "allow" || a === "deny" || a === "ask";
  if (isAction(value)) return value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const rule = (value as Record<string, unknown>)[key];
  if (isAction(rule)) return rule;
  if (typeof rule !== "object" || rule === null || Array.isArray(rule)) return null;
  let action: PermissionRule["action"] | null = null;
  for (const [pattern, said] of Object.entries(rule))
    if (isAction(said) && (pattern === "*" || (subject !== null && wildcard(pattern, subject)))) action = said;
  return action;
}
