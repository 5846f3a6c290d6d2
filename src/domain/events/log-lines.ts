// What oc-exec reads from opencode's own log (`--print-logs --log-level INFO`, logfmt on stderr).
// Not a stable interface: each fact is optional, and a release that logs none of them loses only
// what it would have told (docs/compatibility.md says which releases log what). Pure.
export type LogFact =
  /** A step's model call begins: the message it writes to, in its session. */
  | { kind: "process"; messageId: string; sessionId: string | null }
  /** The provider/model a model call goes to (`small=true` calls, like title generation, are skipped). */
  | { kind: "model"; model: string }
  /** A model call failed; opencode may retry it (a new `model` fact for the same message follows). */
  | { kind: "stream-error"; cause: string; at: number | null }
  /** A tool's permission was evaluated: the first sign that the tool is about to run. */
  | { kind: "permission"; permission: string; pattern: string | null; action: string | null }
  /** The cause behind an UnknownError's `ref`. */
  | { kind: "cause"; ref: string; error: string }
  /** An MCP server did not start (opencode goes on without its tools, and says so only here). */
  | { kind: "mcp-unavailable"; name: string; status: string | null };

export function logFactOf(fields: Record<string, string>): LogFact | null {
  const { message } = fields;
  if (fields.ref && fields.error) return { kind: "cause", ref: fields.ref, error: fields.error };
  if (message === "process" && fields.messageID && !fields.error)
    return { kind: "process", messageId: fields.messageID, sessionId: fields["session.id"] ?? null };
  if (message === "stream" && fields.providerID && fields.modelID && fields.small !== "true") {
    return { kind: "model", model: `${fields.providerID}/${fields.modelID}` };
  }
  if (message === "stream error" && fields.small !== "true") {
    const at = fields.timestamp ? Date.parse(fields.timestamp) : Number.NaN;
    return {
      kind: "stream-error",
      cause: fields["error.error"] ?? fields.error ?? "unknown error",
      at: Number.isNaN(at) ? null : at,
    };
  }
  if (message === "server unavailable" && fields.key)
    return { kind: "mcp-unavailable", name: fields.key, status: fields.status ?? null };
  if (message === "evaluated" && fields.permission) {
    return {
      kind: "permission",
      permission: fields.permission,
      pattern: fields.pattern ?? null,
      action: fields["action.action"] ?? null,
    };
  }
  return null;
}
