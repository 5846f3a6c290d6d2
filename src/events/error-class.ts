// Maps one opencode error (by name, as 1.x names them, or by the looser 2.x `type`) to the
// outcome class it stands for. The turn's overall class is decided in classify.ts.
import type { OutcomeClass } from "../contract/exit-codes.js";

const CONFIG_ERRORS = new Set([
  "ProviderAuthError",
  "ProviderModelNotFoundError",
  "ModelNotFoundError",
  "ProviderInitError",
  "ConfigJsonError",
  "ConfigInvalidError",
  "ConfigDirectoryTypoError",
]);

export function errorClassOf(name: string, statusCode: number | null): OutcomeClass {
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
