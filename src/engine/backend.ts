// The port between the engine and where a turn runs (a host, called a backend in the code). A
// backend is a value made once per run (one binary located and identified, or one server reached
// and health-checked) that the engine asks to open each turn. The engine imports no host (its
// --verify checks run through sys/process.ts, the one way oc-exec runs a command); a host imports
// this file and nothing else of the engine (test/unit/layers.test.ts). Today's hosts, in hosts/:
// `opencode run` (process/), a running server (server/), an SSH host (ssh/), warm reuse (warm/),
// the sandbox around the first two. hosts/make-backend.ts, which picks one, is the composition root.
import type { EventOf } from "../contract/schema.js";
import type { UpstreamSource } from "../domain/events/upstream-source.js";
import type { LaunchProblem, Warning } from "../kernel/problem.js";
import type { ResolvedTurn } from "../plan/resolve-options.js";

/** What the engine read for the turn before asking the backend to open it. */
export type TurnInput = {
  /** What opencode is sent: the prompt, with the output schema's instruction when there is one. */
  prompt: string;
  title: string | null;
  /** --allow/--deny as a permission config, or null when neither was given. */
  policy: Record<string, unknown> | null;
};

/** A backend's session operations after the turn: `opencode export`/`session delete`, or the server's API. */
export type SessionOps = {
  /** The session's model and cost from its record; null when the backend's stream names them itself. */
  export: ((sessionId: string) => Promise<{ model: string | null; costUsd: number | null } | { error: string }>) | null;
  delete: (sessionId: string) => Promise<true | { error: string | null }>;
  /** The session the turn ran in when the backend knows it before any line names it (a server session). */
  sessionId: string | null;
};

/** A command to run: its file, arguments and environment. */
export type CommandLaunch = {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** What goes on its stdin (default: nothing). */
  input?: string;
  /** Keep stdin open after the input until the command ends: over ssh, its end is what stops the remote command. */
  holdInput?: boolean;
  /** Lines of its output that are the wrapper's own (the remote script's markers), not the command's. */
  wrapperLine?: RegExp;
};

export type OpenedTurn = {
  source: UpstreamSource;
  ops: SessionOps;
  /** In a sandbox: the connections its proxy refused to this turn so far, as host:port. */
  refused?: () => string[];
};

export type Backend = {
  /** What run.started says about opencode: its path or URL and version, as far as they are known. */
  readonly opencode: EventOf<"run.started">["opencode"];
  /** Permission keys the backend itself takes from every session (a server: question): its policy too. */
  readonly removes?: readonly string[];
  /** The ACP agent every turn on this backend runs through, as run.started describes it. */
  readonly acp?: EventOf<"run.started">["acp"];
  /** The sandbox every turn on this backend runs in, as run.started and result describe it. */
  readonly sandbox?: EventOf<"run.started">["sandbox"];
  /** A command (a --verify check) as it runs where the turn's tools run: inside its sandbox. */
  wrapCommand?(command: CommandLaunch): Promise<CommandLaunch>;
  /** Ends what the backend holds for the whole run (a sandbox's proxy); the maker calls it once. */
  close?(): Promise<void>;
  /** Values this backend holds that no output may show (a server's password): redacted like the environment's. */
  readonly secrets?: readonly string[];
  /**
   * The host the turn runs on (--ssh, or a server started with --ssh) and its directory there (null:
   * the login directory): the workspace is there, so nothing of it is checked or compared here.
   */
  readonly remote?: { host: string; dir: string | null };
  /** A problem that stops every turn on this backend (no binary, no server), after run.started. */
  readonly problem: LaunchProblem | null;
  /** What this backend cannot do for this turn (a problem), and what it warns about. */
  check(plan: ResolvedTurn): { problem: LaunchProblem | null; warnings: Warning[] };
  /** Opens the turn: its upstream source and session operations, or why it cannot start. */
  open(plan: ResolvedTurn, input: TurnInput): Promise<OpenedTurn | { problem: LaunchProblem }>;
};

/**
 * A backend of one turn's own, made when the turn starts and closed when it ends (a batch task's
 * ACP agent: an agent serves one prompt at a time). `startup`: aborted when the turn stops first.
 */
export type BackendMaker = (startup: AbortSignal) => Promise<Backend>;
