import type { FailOn } from "../domain/outcome/fail-on.js";
import type { RehearsalName } from "../domain/scripted/rehearsals.js";
import type { SandboxMode } from "./sandbox-spec.js";

// The public options, split by lifetime as the best SDKs do (the Codex SDK's CodexOptions,
// ThreadOptions and TurnOptions): how to reach opencode, where and as whom turns run, and what one
// turn may do. None of them knows about the command line; the CLI builds them from its flags.

/** How to reach opencode. One per program. */
export type ClientOptions = {
  /** The opencode binary. Default: $OC_EXEC_OPENCODE, then the bundled opencode-ai, then PATH. */
  opencode?: string;
  /** The environment opencode inherits, before oc-exec's managed variables. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /**
   * Run turns on this running opencode server (`opencode serve`, or `oc-exec server start`) instead of
   * starting `opencode run` for each. Credentials: in the URL, OPENCODE_SERVER_PASSWORD, or oc-exec's
   * record of a server it started.
   */
  attach?: string;
  /**
   * Run the turn through an agent that speaks the Agent Client Protocol instead of `opencode run`:
   * a built-in name (opencode, gemini, qwen, claude, codex, copilot) or its ACP command line.
   */
  acp?: string;
  /**
   * Rehearse instead of running for real (as --rehearse, or OC_EXEC_REHEARSE in `env`): the real
   * opencode against oc-exec's scripted model, in a throwaway HOME and workspace, playing this scenario.
   */
  rehearse?: RehearsalName;
};

/** Where and as whom turns run. */
export type SessionOptions = {
  /** The workspace. Default: the current directory. */
  dir?: string;
  /** provider/model. Default: opencode's configured model. */
  model?: string;
  agent?: string;
  /** A provider-specific reasoning effort. */
  variant?: string;
  /** Resume this opencode session. */
  session?: string;
  /** Resume the most recent session. */
  continue?: boolean;
  /** Run a new session forked from the resumed one. */
  fork?: boolean;
  /** The session's title. Default: the prompt's first line. */
  title?: string;
  /** Run opencode without external plugins. */
  pure?: boolean;
  /** Delete the session after the turn, also when it fails. */
  ephemeral?: boolean;
  /** Permission keys to allow: every other known key is then denied. */
  allow?: string[];
  /** Permission keys to deny; a key may not be in both lists. */
  deny?: string[];
  /** Approve every permission the opencode configuration does not deny. Off by default: safe. */
  auto?: boolean;
  /** Extra opencode configuration objects, deep-merged into OPENCODE_CONFIG_CONTENT. */
  config?: Record<string, unknown>[];
  /**
   * Run opencode and everything it starts in a sandbox: "read-only" (writes only its own state and a
   * private temporary directory), "workspace-write" (also `dir` and `writable`), or "off". Default:
   * $OC_EXEC_SANDBOX in `env`, else "off". Secret stores are unreadable, the network reaches only the
   * providers' hosts and `allowHosts`, and the environment is scrubbed (see `passEnv`).
   */
  sandbox?: SandboxMode;
  /** With sandbox "workspace-write": more paths the sandbox may write. */
  writable?: string[];
  /**
   * With a sandbox: more paths it may read. HOME is hidden in a sandbox but for opencode's
   * configuration and the toolchains that live there (docs/sandbox.md lists them).
   */
  readable?: string[];
  /** With a sandbox: more hosts it lets through, as HOST or HOST:PORT (a package registry, say). */
  allowHosts?: string[];
  /** With a sandbox or ssh: more environment variables it passes on (names, or patterns with `*`). */
  passEnv?: string[];
  /**
   * Run the turn on another host: `[user@]host[:port]` or a Host alias of the ssh config, through
   * the system's OpenSSH client. `dir` and `opencode` then name a directory and a binary there.
   */
  ssh?: string;
  /**
   * Run the turn on a warm server: one already running that fits it (same workspace, binary,
   * configuration, sandbox and environment), else one started for it that later turns reuse.
   * Default: $OC_EXEC_WARM in `env`.
   */
  warm?: boolean;
  /** With ssh: more ssh options, each `KEY=VALUE` (passed as `-o KEY=VALUE`). */
  sshOptions?: string[];
  /**
   * Variables whose values are secrets, besides those whose names contain TOKEN, KEY, SECRET,
   * PASSWORD or CREDENTIAL: their values are replaced by [REDACTED] in everything oc-exec writes.
   */
  redactEnv?: string[];
};

/** What one turn may do. */
export type TurnOptions = {
  /** Files to attach to the message. */
  files?: string[];
  /** Include reasoning events. */
  thinking?: boolean;
  /** With attach: `message.delta` events carry the assistant's text as it is written. */
  textDeltas?: boolean;
  /** A JSON Schema the final answer must satisfy; the value lands in result.structured_output. */
  outputSchema?: object;
  /** Write the final assistant message to this file, atomically. */
  outputLastMessage?: string;
  /**
   * After the turn, write the workspace's changes (a git work tree's files under `dir`: new, changed,
   * deleted, binary, modes) to this file as a patch `git apply` takes on a clean checkout; never
   * anything under .git, never this file. Made without running git over what the agent wrote.
   */
  outputPatch?: string;
  /** Whole-turn, start-up (first JSON event) and idle (no output) limits in ms; 0 = off. */
  timeoutMs?: number;
  startupTimeoutMs?: number;
  idleTimeoutMs?: number;
  /** Grace period between SIGTERM and SIGKILL when a turn is stopped. */
  killAfterMs?: number;
  maxSteps?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  /** Cap each tool output in events at this many bytes. */
  maxOutputBytes?: number;
  /** Attach the original opencode line to each event derived from it. */
  includeRaw?: boolean;
  /** After the turn, ask `opencode export` for the model and cost. Default: only when neither the caller nor opencode's log named the model. */
  export?: boolean;
  /** Conditions that turn a successful turn into a failure (agent_error): tool-error, no-changes, no-message. */
  failOn?: FailOn[];
  /**
   * Shell commands that check the work after a turn that succeeded, in order, in the workspace (in
   * the sandbox when there is one). One failing sends the agent back with its output, up to
   * verifyAttempts times; still failing, the turn is agent_error (VerificationFailed).
   */
  verify?: string[];
  /** Each verify command's limit in ms (0 = none; --timeout still covers the whole turn). */
  verifyTimeoutMs?: number;
  /** How many times a failed check sends the agent back (0 = check only). */
  verifyAttempts?: number;
  /**
   * More attempts after a transient failure (a retryable API error, a stall, a lost server): the
   * next one goes on in the same session. Default 0.
   */
  retry?: number;
  /** The first wait between attempts, doubled each time up to retryMaxDelayMs, with jitter. */
  retryDelayMs?: number;
  retryMaxDelayMs?: number;
  /** provider/model: once the attempts on the model are spent on transient failures, as many more on this one. */
  fallbackModel?: string;
  /** Abort the turn; the abort reason, when it is a StopReason, says why. */
  signal?: AbortSignal;
  /** Called with each of opencode's own stderr lines. */
  onStderrLine?: (line: string) => void;
  /** Called at the first sign that a tool started, before its `tool` event (not every release shows one). */
  onToolStarted?: (tool: string, callId: string | null) => void;
};

/** Everything `runTurn` takes: the three kinds of options and the prompt. */
export type RunTurnOptions = ClientOptions & SessionOptions & TurnOptions & { prompt: string };

/**
 * Every key runTurn takes, as a value: the library refuses any other (a typo such as `sanbox`
 * would otherwise drop the sandbox in silence), as esbuild's API does. The type below fails to
 * compile when RunTurnOptions gains a key this list lacks.
 */
const RUN_TURN_KEYS = [
  "prompt",
  ...["opencode", "env", "attach", "acp", "rehearse"],
  ...["dir", "model", "agent", "variant", "session", "continue", "fork", "title", "pure", "ephemeral"],
  ...["allow", "deny", "auto", "config", "sandbox", "writable", "readable", "allowHosts", "passEnv", "ssh"],
  ...["warm", "sshOptions", "redactEnv", "files", "thinking", "textDeltas", "outputSchema", "outputLastMessage"],
  ...["outputPatch", "timeoutMs", "startupTimeoutMs", "idleTimeoutMs", "killAfterMs", "maxSteps", "maxTokens"],
  ...["maxCostUsd", "maxOutputBytes", "includeRaw", "export", "failOn", "verify", "verifyTimeoutMs"],
  ...["verifyAttempts", "retry", "retryDelayMs", "retryMaxDelayMs", "fallbackModel", "signal", "onStderrLine"],
  "onToolStarted",
] as const satisfies readonly (keyof RunTurnOptions)[];
type Missing = Exclude<keyof RunTurnOptions, (typeof RUN_TURN_KEYS)[number]>;
const allKeysListed: [Missing] extends [never] ? true : Missing = true;
void allKeysListed;

/** The keys of `options` that runTurn does not take, each with the known key it most resembles. */
export function unknownOptionKeys(options: object): string[] {
  const known: readonly string[] = RUN_TURN_KEYS;
  return Object.keys(options)
    .filter((key) => !known.includes(key))
    .map((key) => {
      const near = known.find((k) => closeTo(k.toLowerCase(), key.toLowerCase()));
      return near ? `${key} (did you mean ${near}?)` : key;
    });
}

/** Within one edit (a letter added, dropped, changed, or two swapped). */
function closeTo(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  const rest = (x: string, y: string) => x.slice(i + 1) === y.slice(i + 1);
  return (
    a.slice(i + 1) === b.slice(i) ||
    a.slice(i) === b.slice(i + 1) ||
    rest(a, b) ||
    (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2))
  );
}

/** The defaults, in one place; resolveTurnOptions applies them. */
export const DEFAULTS = {
  dir: ".",
  timeoutMs: 0,
  startupTimeoutMs: 60_000,
  idleTimeoutMs: 0,
  killAfterMs: 5_000,
  /** A server --warm started stops after this long without a turn: the gaps of a script, not a day. */
  warmIdleMs: 5 * 60_000,
  maxOutputBytes: 64 * 1024,
  // Lines above this are cut and reported (a 20 MB line must not grow memory without bound);
  // real tool output lines of 10 MB still pass whole.
  maxLineBytes: 16 * 1024 * 1024,
  sessionCommandTimeoutMs: 30_000,
  verifyTimeoutMs: 10 * 60_000,
  // Two rounds of repair: a check the agent has failed to fix three times running rarely passes on
  // a fourth, and every round costs a whole agent turn.
  verifyAttempts: 2,
  retryDelayMs: 2_000,
  retryMaxDelayMs: 60_000,
  // A stall can only be noticed with an idle limit: with --retry and none set, this one. opencode
  // itself waits ~300 s on a stream with no byte; two minutes of silence is a stall for any model.
  retryIdleTimeoutMs: 120_000,
} as const;
