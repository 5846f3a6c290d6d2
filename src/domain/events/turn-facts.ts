// What the normalizer learned of a turn, for the classifier, the budgets, --fail-on and the
// result: read by outcome/, written only by the normalizer and its parts (events/).
import type { FileChange, PermissionDenial, Usage } from "../../contract/schema.js";
import { emptyUsage } from "../../contract/usage.js";
import type { UpstreamError } from "./upstream-error.js";

export type { UpstreamError };

export type StreamCounts = { json_lines: number; other_lines: number; blank_lines: number; warnings: number };

export type TurnFacts = {
  sessionId: string | null;
  /**
   * The session opencode's log named at the first model call, before any event did: a stalled
   * first call prints no event, and --retry still goes on in that session.
   */
  logSessionId: string | null;
  /**
   * opencode is waiting to retry a failed model call: the cause, and when it will try again (epoch
   * ms) when it said so (a server's retry event); null once a call goes out again or a step ends.
   */
  waitingToRetry: { cause: string; until: number | null } | null;
  steps: number;
  lastStepReason: string | null;
  usage: Usage;
  costUsd: number;
  /** The final assistant message: the text parts of the last message that had text. */
  readonly finalText: string | null;
  tools: { total: number; failed: number; denied: number };
  /** The tool calls that ended in error (the first few), for --fail-on tool-error's evidence. */
  failedTools: { tool: string; callId: string | null; error: string | null }[];
  /** MCP servers that did not start, by name: their tools were missing from the turn. */
  mcpUnavailable: string[];
  filesChanged: FileChange[];
  permissionDenials: PermissionDenial[];
  /** The denials a rule of the policy made (not an `ask` nobody could answer). */
  policyDenied: Set<PermissionDenial>;
  errors: UpstreamError[];
  /** Errors opencode retried past: a later step answered (upstream #50062). Not the turn's failure. */
  recoveredErrors: UpstreamError[];
  /**
   * The stream stopped before the turn could answer: a step started and never finished with no text
   * after it (1.14.50 exited 0 like this, upstream #27697), or the last step asked for tools and
   * no step followed. Null when the turn answered.
   */
  cutOff: { step: number; afterTools: boolean } | null;
  /** opencode's own stderr complaint: from its first "Error: ..." line on, with the lines that explain it. */
  stderrErrors: string[];
  stderrConfigError: boolean;
  /** The stderr lines that showed a configuration problem, cleaned of log decoration. */
  stderrConfigLines: string[];
  /** opencode showed an interactive permission prompt (releases before --auto existed) and waits forever. */
  blockedOnPrompt: boolean;
  stderrTail: string[];
  stream: StreamCounts;
  /** JSON events opencode printed that oc-exec recognized. */
  events: number;
  sessionMismatch: { requested: string; reported: string } | null;
  /** The provider/model of the latest model call, from opencode's log; null when it logged none. */
  model: string | null;
};

/** The facts of a turn before its first line; the final text is joined from its parts when read. */
export function createTurnFacts(textParts: () => string[]): TurnFacts {
  return {
    sessionId: null,
    logSessionId: null,
    waitingToRetry: null,
    steps: 0,
    lastStepReason: null,
    usage: emptyUsage(),
    costUsd: 0,
    get finalText(): string | null {
      const parts = textParts();
      return parts.length > 0 ? parts.join("\n") : null;
    },
    tools: { total: 0, failed: 0, denied: 0 },
    failedTools: [],
    mcpUnavailable: [],
    filesChanged: [],
    permissionDenials: [],
    policyDenied: new Set(),
    errors: [],
    recoveredErrors: [],
    cutOff: null,
    stderrErrors: [],
    stderrConfigError: false,
    stderrConfigLines: [],
    blockedOnPrompt: false,
    stderrTail: [],
    stream: { json_lines: 0, other_lines: 0, blank_lines: 0, warnings: 0 },
    events: 0,
    sessionMismatch: null,
    model: null,
  };
}
