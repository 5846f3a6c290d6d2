// Maps one opencode error (by name, as 1.x names them, or by the looser 2.x `type`) to the
// outcome class it stands for. The turn's overall class is decided in classify.ts.
import type { OutcomeClass } from "../../contract/exit-codes.js";

const CONFIG_ERRORS = new Set([
  "ProviderAuthError",
  "ProviderModelNotFoundError",
  "ModelNotFoundError",
  "ProviderInitError",
  "ConfigJsonError",
  "ConfigInvalidError",
  "ConfigDirectoryTypoError",
]);

/**
 * opencode 2.x's session error `type`s (its session runner maps each provider failure to one; see
 * docs/compatibility.md for the table per release). The provider refusing a key (`provider.auth`,
 * a 401/403) is the provider's answer, so api_error, as APIError 401 is on 1.x; a model or
 * provider opencode cannot route to is the user's configuration.
 */
export const V2_ERROR_TYPES: Readonly<Record<string, OutcomeClass>> = {
  "provider.auth": "api_error",
  "provider.rate-limit": "api_error",
  "provider.quota": "api_error",
  "provider.timeout": "api_error",
  "provider.transport": "api_error",
  "provider.internal": "api_error",
  "provider.server-error": "api_error",
  "provider.overloaded": "api_error",
  "provider.invalid-output": "api_error",
  "provider.invalid-request": "api_error",
  "provider.unknown": "api_error",
  "provider.error": "api_error",
  "provider.context-overflow": "context_overflow",
  "context.limit": "context_overflow",
  "provider.not-found": "config_error",
  "provider.no-route": "config_error",
  "provider.content-filter": "agent_error",
  "permission.rejected": "approval_denied",
  "tool.execution": "agent_error",
  aborted: "agent_error",
  unknown: "agent_error",
};

export function errorClassOf(name: string, statusCode: number | null): OutcomeClass {
  const v2 = V2_ERROR_TYPES[name];
  if (v2) return v2;
  // A provider failure 2.x added after this table: the provider's, whatever it is called.
  if (name.startsWith("provider.")) return "api_error";
  if (CONFIG_ERRORS.has(name)) return "config_error";
  if (name === "APIError") return "api_error";
  if (name === "ContextOverflowError") return "context_overflow";
  // 2.x and other releases name errors loosely (`{type: "error", message}`, `provider_auth`, ...).
  const loose = name.toLowerCase().replace(/[^a-z]/g, "");
  if (loose.includes("contextoverflow") || loose.includes("contextlength")) return "context_overflow";
  if (loose.includes("auth") || loose.includes("modelnotfound") || loose.includes("config")) return "config_error";
  if (loose.includes("api") || statusCode !== null) return "api_error";
  return "agent_error";
}

/** Stderr text opencode prints, without any JSON, when its configuration or arguments are wrong. */
const CONFIG_STDERR = [
  /Configuration is invalid/i,
  /Session not found/i,
  /File not found/i,
  /^--- Errors ---/,
  /UnexpectedEndOfString|InvalidSymbol|PropertyNameExpected|ValueExpected/,
  /Model not found/i,
  /Provider(ModelNotFound|Init|Auth)Error/,
  /no providers found/i,
  /Resource not found: .*\/session\//,
  /Provider not found/i,
  /Agent .* not found/i,
];

export function isConfigStderr(line: string): boolean {
  return CONFIG_STDERR.some((re) => re.test(line));
}
