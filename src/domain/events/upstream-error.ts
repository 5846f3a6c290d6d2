// One opencode error line, whatever the release's shape, as an UpstreamError with its class.
// Pure: the Normalizer decides when to record it (an UnknownError may wait for its cause).

import type { OutcomeClass } from "../../contract/exit-codes.js";
import { errorClassOf, isConfigStderr } from "./error-class.js";
import { redact, redactValue } from "./redact.js";
import { type Json, readBoolean, readNumber, readObject, readString } from "./upstream.js";

export type UpstreamError = {
  class: OutcomeClass;
  name: string;
  message: string;
  statusCode: number | null;
  retryable: boolean | null;
  ref: string | null;
};

// The last: Gemini's API ("The input token count (N) exceeds the maximum number of tokens allowed (M)").
const CONTEXT_OVERFLOW_TEXT =
  /context_length_exceeded|maximum context length|context window|prompt is too long|too many tokens|input token count .* exceeds the maximum/i;

export function parseUpstreamError(event: Json): UpstreamError {
  // 1.x: {error: {name, data: {message, statusCode, isRetryable, ref}}}
  // 2.x: {error: {type, message}} or {message}
  const error = readObject(event, "error");
  const data = readObject(error, "data");
  const name = readString(error, "name") ?? readString(error, "type") ?? readString(event, "name") ?? "Error";
  const statusCode = readNumber(data, "statusCode") ?? readNumber(error, "statusCode") ?? readNumber(error, "status");
  const rawMessage =
    readString(data, "message") ??
    readString(error, "message") ??
    readString(event, "message") ??
    (typeof event.error === "string" ? event.error : null) ??
    JSON.stringify(redactValue(event.error ?? event));
  const upstream: UpstreamError = {
    class: errorClassOf(name, statusCode),
    name,
    message: redact(rawMessage),
    statusCode: statusCode === null ? null : Math.round(statusCode),
    retryable: readBoolean(data, "isRetryable") ?? readBoolean(error, "retryable"),
    ref: readString(data, "ref"),
  };
  if (
    upstream.class === "api_error" &&
    CONTEXT_OVERFLOW_TEXT.test(`${upstream.message} ${readString(data, "responseBody") ?? ""}`)
  ) {
    // Releases before ContextOverflowError (1.0) report an overflow as a plain HTTP 400.
    upstream.class = "context_overflow";
  }
  const unknown = name === "UnknownError" || name === "unknown";
  // The server (1.18) also sends an UnknownError whose message is a thrown error with its stack:
  // "ProviderModelNotFoundError: Model not found: x/y.\n    at ...". The first line is the cause.
  const thrown = unknown ? /^([A-Z][A-Za-z]*Error: [^\n]*)\n\s+at /.exec(upstream.message) : null;
  if (thrown) applyCause(upstream, thrown[1]!);
  else if (unknown && /^(Model|Provider) not found/.test(upstream.message)) {
    // 1.14 (and 2.x's start-up errors) put the cause in the message instead of behind a ref.
    applyCause(upstream, `ProviderModelNotFoundError: ${upstream.message}`);
  } else if (unknown && isConfigStderr(upstream.message)) {
    // 2.x reports start-up problems (an unknown session, a bad config) as a JSON error of type
    // "unknown"; 1.x says the same words on stderr, and they are the user's to fix on both.
    upstream.class = "config_error";
  }
  return upstream;
}

/** Applies a logged cause ("ProviderModelNotFoundError: Model not found: fake/nope.") to an error. */
export function applyCause(error: UpstreamError, cause: string): void {
  const m = /^([A-Za-z]+Error):\s*(.*)$/s.exec(cause.trim());
  error.name = m ? m[1]! : error.name;
  error.message = redact(m ? m[2]! : cause.trim());
  error.class = errorClassOf(error.name, error.statusCode);
  if (error.name === "ProviderModelNotFoundError") {
    // opencode lists a provider's models only when it has credentials, so a missing API key
    // also surfaces as "Model not found".
    error.message +=
      " (opencode offers a provider's models only when its credentials are set: an API key in the environment, or `opencode auth login`)";
  }
}
