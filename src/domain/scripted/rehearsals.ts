// The rehearsal scenarios (--rehearse): a table only, so --help and flag checks load no server.
import type { OutcomeClass } from "../../contract/exit-codes.js";

export type Rehearsal = {
  /** What it plays, for --help and the README. */
  what: string;
  /** The scripted model's scenario token. */
  scenario: string;
  expect: OutcomeClass;
  env?: Record<string, string>;
  model?: string;
  /** Plant fake secrets in the throwaway HOME and environment, and start a canary for the agent to reach. */
  attack?: boolean;
  /** Limits that make the scenario end (a stalled model), unless the caller set their own. */
  defaults?: { idleTimeoutMs?: number; maxSteps?: number };
};

export const REHEARSALS = {
  success: { what: "a plain answer", scenario: "plain", expect: "success" },
  tool: { what: "a bash tool call, then an answer", scenario: "tool", expect: "success" },
  denied: {
    what: "a bash call needing a permission nobody grants",
    scenario: "tool",
    expect: "approval_denied",
    env: { OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) },
  },
  "api-401": { what: "the provider refuses the key", scenario: "http-401", expect: "api_error" },
  "api-429": { what: "rate limited until opencode gives up (~5 s)", scenario: "http-429", expect: "api_error" },
  overloaded: {
    what: "a provider overloaded past opencode's own retries (~9 s), then fine: success on attempt 2 with --retry 1",
    scenario: "overloaded-once",
    expect: "api_error",
  },
  "retry-after": {
    what: "a provider that asks to be called again in an hour: stopped as api_error, not slept through (idle-timeout 5s unless set)",
    scenario: "retry-after-long",
    expect: "api_error",
    defaults: { idleTimeoutMs: 5000 },
  },
  "context-overflow": {
    what: "the conversation does not fit",
    scenario: "context-overflow",
    expect: "context_overflow",
  },
  length: { what: "the answer is cut off at the output limit", scenario: "length", expect: "agent_error" },
  "unknown-model": {
    what: "a model opencode does not know",
    scenario: "plain",
    expect: "config_error",
    model: "rehearsal/nope",
  },
  budget: {
    what: "an agent that never stops calling tools (max-steps 3 unless set)",
    scenario: "loop-tools",
    expect: "budget_exceeded",
    defaults: { maxSteps: 3 },
  },
  slow: { what: "an answer after 5 s", scenario: "slow-5s", expect: "success" },
  stall: {
    what: "a model that never answers (idle-timeout 5s unless set)",
    scenario: "hang",
    expect: "timeout",
    defaults: { idleTimeoutMs: 5000 },
  },
  "stall-once": {
    what: "a first model call that never answers, then answers: success on attempt 2 with --retry 1 (idle-timeout 5s unless set)",
    scenario: "stall-once",
    expect: "timeout",
    defaults: { idleTimeoutMs: 5000 },
  },
  "verify-fix": {
    what: "claims success without the work, does it when sent back: run it with --verify 'test -f fixed.txt'",
    scenario: "verify-fix",
    expect: "success",
    // The repair is a bash command: opencode's default allows it; a caller's stricter policy would not.
  },
  escape: {
    what: "a prompt-injected agent: writes outside the workspace, reads planted secrets, reaches a canary (run it with --sandbox)",
    scenario: "escape",
    expect: "success",
    attack: true,
    // opencode's own rules must not be what refuses: bash and paths outside the workspace are allowed.
    env: { OPENCODE_PERMISSION: JSON.stringify({ bash: "allow", external_directory: "allow" }) },
  },
} as const satisfies Record<string, Rehearsal>;

export type RehearsalName = keyof typeof REHEARSALS;

export function isRehearsal(name: string): name is RehearsalName {
  return Object.hasOwn(REHEARSALS, name);
}
