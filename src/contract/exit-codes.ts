// The one exit-code table. Every exit status oc-exec can produce is named here, and every other
// module refers to a class by name. result.exit_code is always looked up in this table.
export const EXIT_CODES = {
  success: 0,
  agent_error: 1,
  approval_denied: 2,
  context_overflow: 3,
  api_error: 4,
  config_error: 5,
  budget_exceeded: 6,
  internal_error: 70,
  timeout: 124,
  interrupted: 130,
  terminated: 143,
} as const;

export type OutcomeClass = keyof typeof EXIT_CODES;

export const OUTCOME_CLASSES = Object.keys(EXIT_CODES) as [OutcomeClass, ...OutcomeClass[]];

/**
 * When several causes apply, the first in this list wins. Signals beat everything because the
 * user asked for the stop; our own limits come next; then what the user must fix (config), then
 * the provider (api), then the model's limits, then policy, then anything else.
 */
export const CLASS_PRECEDENCE: readonly OutcomeClass[] = [
  "internal_error",
  "interrupted",
  "terminated",
  "timeout",
  "budget_exceeded",
  "config_error",
  "api_error",
  "context_overflow",
  "approval_denied",
  "agent_error",
  "success",
];

/** Not a class: the reader of stdout went away (EPIPE), so no result line can be written. */
export const BROKEN_PIPE_EXIT = 141;

export function exitCodeOf(cls: OutcomeClass): number {
  return EXIT_CODES[cls];
}

/** What each class means, for the stderr summary and the README. */
export const CLASS_MEANING: Record<OutcomeClass, string> = {
  success: "the turn finished normally",
  agent_error: "the agent or opencode failed (cut-off answer, crash, no output, unknown error)",
  approval_denied: "a tool call needed a permission that was not granted",
  context_overflow: "the conversation no longer fits the model's context window",
  api_error: "the model provider's API failed (auth, rate limit, server error, network)",
  config_error: "oc-exec or opencode is misconfigured (flags, binary, workspace, model, credentials)",
  budget_exceeded: "a --max-steps, --max-tokens or --max-cost-usd limit was crossed",
  internal_error: "a bug in oc-exec itself",
  timeout: "a --timeout, --startup-timeout or --idle-timeout fired",
  interrupted: "stopped by SIGINT (Ctrl-C)",
  terminated: "stopped by SIGTERM or SIGHUP",
};
