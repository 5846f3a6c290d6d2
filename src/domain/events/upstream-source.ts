// The seam between the turn engine and opencode: a source delivers opencode's event lines and its
// log lines, can be held back and stopped, and says how it ended. The engine (engine/run-source.ts)
// does not know whether the lines come from `opencode run`'s pipes (hosts/process/process-source.ts)
// or from a server's event stream (hosts/server/server-source.ts).
import type { SplitLine } from "./line-splitter.js";

export type UpstreamSink = {
  /** One line of opencode's JSON event stream (maybe cut or truncated on the way). */
  eventLine(line: SplitLine): void;
  /** One line of opencode's diagnostics (stderr): notices, logs, errors. */
  logLine(text: string): void;
};

export type SourceEnd = {
  /** How opencode's process ended, when there was one. */
  process: { exitCode: number | null; signal: string | null } | null;
  /** The source never started (spawn failed, server unreachable): what went wrong. */
  failure: { name: string; message: string } | null;
  /** The source started but was lost mid-turn (a server went away, its event stream broke): why. */
  lost: { name: string; message: string } | null;
};

export type RunningSource = {
  /** Resolves once the source has ended and every line it had was delivered. */
  done: Promise<SourceEnd>;
  /** End the turn: gracefully first; force = now (a second Ctrl-C). */
  stop(force: boolean): void;
  /** Flow control: stop (true) or resume (false) delivering event lines. */
  hold(held: boolean): void;
};

export type UpstreamSource = {
  start(sink: UpstreamSink): RunningSource;
  /**
   * The turn begins by starting opencode (`opencode run`, here or over ssh), whose first second or
   * two are silent: the idle timer waits for its first output (the start-up timer judges the start).
   */
  startsOpencode?: boolean;
  /**
   * The agent behind the source is already started and answering (an ACP agent, initialized before
   * run.started): there is no start-up to judge, and its first output waits on the model, so the
   * idle timer runs from the start and the start-up timer not at all.
   */
  ready?: boolean;
};
