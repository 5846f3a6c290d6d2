// What one turn needs. The CLI builds this from flags; library users build it directly.
export type PromptSource = string | (() => Promise<{ text: string; warnings: { code: string; message: string }[] }>);

export type TurnOptions = {
  /** The prompt, or a function that reads it (called after run.started is written). */
  prompt: PromptSource;
  /** The workspace; default the current directory. Made absolute. */
  dir?: string;
  /** The opencode binary; default OC_EXEC_OPENCODE, then the bundled dependency, then PATH. */
  opencode?: string | null;
  model?: string | null;
  agent?: string | null;
  variant?: string | null;
  thinking?: boolean;
  session?: string | null;
  title?: string | null;
  files?: string[];
  pure?: boolean;
  /** Auto-approve permissions the config does not deny (opencode --auto). Off by default: safe. */
  auto?: boolean;
  /** Resume the most recent session (opencode --continue); fork the resumed session (--fork). */
  continueLast?: boolean;
  fork?: boolean;
  /** Permission keys to allow (all other known keys are then denied) and to deny. */
  allow?: string[];
  deny?: string[];
  /** Extra opencode configuration objects, deep-merged into OPENCODE_CONFIG_CONTENT. */
  config?: Record<string, unknown>[];
  /** A JSON Schema the final answer must satisfy; the parsed value lands in result.structured_output. */
  outputSchema?: object | null;
  /** Write the final assistant message to this file, atomically. */
  outputLastMessage?: string | null;
  /** Delete the session after the turn (opencode session delete). */
  ephemeral?: boolean;
  /** After the turn, ask `opencode export` for the model and cost (default: when the model is unknown). */
  export?: boolean;
  /** Attach the original opencode line to each event derived from it. */
  includeRaw?: boolean;
  /** The environment opencode inherits (before oc-exec's managed variables). Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Whole-turn, start-up (first JSON line) and idle (no output) limits in ms; 0 or null = off. */
  timeoutMs?: number | null;
  startupTimeoutMs?: number | null;
  idleTimeoutMs?: number | null;
  /** Grace period between SIGTERM and SIGKILL when stopping the process group. */
  killAfterMs?: number;
  maxOutputBytes?: number;
  maxLineBytes?: number;
  maxSteps?: number | null;
  maxTokens?: number | null;
  maxCostUsd?: number | null;
  /** Abort the turn; the abort reason (a StopReason) says why. */
  signal?: AbortSignal;
  /** A problem the caller found before the turn could start (bad flags): reported as config_error. */
  launchError?: { name: string; message: string } | null;
  /** Called with each of opencode's stderr lines (for --verbose). */
  onStderrLine?: (line: string) => void;
  /** Injected clock, for tests. */
  clock?: () => number;
};

export const DEFAULTS = {
  startupTimeoutMs: 60_000,
  killAfterMs: 5_000,
  maxOutputBytes: 64 * 1024,
  // Lines above this are cut and reported (a 20 MB line must not grow memory without bound);
  // real tool output lines of 10 MB still pass whole.
  maxLineBytes: 16 * 1024 * 1024,
  sessionCommandTimeoutMs: 30_000,
} as const;
