// Runs one turn from start to `result`: prepare the backend (`opencode run`, or a running server
// with --attach), run its upstream source, the work after it, then the result (turn-core.ts,
// shared with replay). Both backends share everything after the source: timers, budgets, the
// normalizer, the classifier and the result.
// Each stage returns what it found; the classifier's input is assembled here, once.
// Every path ends in exactly one result event, including bugs in this file.
import type { OcEvent, ResultEvent } from "../contract/schema.js";
import { processSource } from "../opencode/process-source.js";
import type { TurnEnd } from "../outcome/classify.js";
import type { UpstreamSource } from "../events/upstream-source.js";
import { deleteSession, exportSession } from "../opencode/session-commands.js";
import { DEFAULTS } from "./options.js";
import { prepareServerTurn } from "../server/prepare-server.js";
import { serverSource } from "../server/server-source.js";
import { type AfterTurn, afterTurn, type SessionOps } from "./after-turn.js";
import type { TurnControl } from "./control.js";
import { type LaunchProblem, prepareTurn } from "./prepare.js";
import type { ResolvedTurn } from "./resolve-options.js";
import { runSource, type SourceRun } from "./run-source.js";
import { createTurnCore, splitterOptions, type TurnCore } from "./turn-core.js";

export async function executeTurn(
  options: ResolvedTurn,
  sink: (event: OcEvent) => void,
  control: TurnControl,
): Promise<ResultEvent> {
  control.follow(options.signal);
  const core = createTurnCore(
    {
      workspace: options.dir,
      session: options.session,
      continue: options.continue,
      fork: options.fork,
      maxOutputBytes: options.maxOutputBytes,
      maxLineBytes: options.maxLineBytes,
      includeRaw: options.includeRaw,
      clock: options.clock,
      labels: options.labels,
      failOn: options.failOn,
      onToolStarted: options.onToolStarted ?? undefined,
    },
    sink,
  );
  let ran: SourceRun | null = null;
  let after: AfterTurn | null = null;
  let problem: LaunchProblem | null = null;
  let bug: { message: string } | null = null;
  try {
    const backend =
      options.attach === null
        ? await processBackend(options, core)
        : await serverBackend(options, core, options.attach);
    problem = backend.problem;
    if (backend.source && control.reason === null) ran = await runSource(backend.source, options, core, control);
    if (backend.ops) after = await afterTurn(options, core.normalizer, backend.ops, ran?.stop ?? control.reason);
  } catch (error) {
    bug = { message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  const end: TurnEnd = {
    stop: ran?.stop ?? control.reason,
    launchError: problem ?? ran?.failure ?? null,
    internalError: ran?.internalError ?? bug,
    process: ran?.process ?? null,
    outputError: after?.outputError ?? null,
    lost: ran?.lost ?? null,
  };
  return core.finish(end, {
    model: after?.model ?? options.model,
    costUsd: after?.costUsd,
    structuredOutput: after?.structuredOutput,
    sessionDeleted: after?.sessionDeleted,
  });
}

/** What a backend prepared: the source to run and its session operations, or why it cannot start. */
type Backend = { source: UpstreamSource | null; ops: SessionOps | null; problem: LaunchProblem | null };

/** `opencode run`: one process per turn; export and delete are opencode commands. */
async function processBackend(options: ResolvedTurn, core: TurnCore): Promise<Backend> {
  const { invocation, problem } = await prepareTurn(options, core);
  if (!invocation) return { source: null, ops: null, problem };
  const source = processSource(invocation, {
    killAfterMs: options.killAfterMs,
    split: splitterOptions(options.maxLineBytes, options.maxOutputBytes),
  });
  const ctx = {
    binary: invocation.file,
    env: invocation.env,
    cwd: invocation.cwd,
    timeoutMs: DEFAULTS.sessionCommandTimeoutMs,
  };
  const ops: SessionOps = {
    export: (id) => exportSession(ctx, id),
    delete: (id) => deleteSession(ctx, id),
    sessionId: null,
  };
  return { source, ops, problem: null };
}

/** --attach: a session on a running server; the stream names model and cost, the API deletes. */
async function serverBackend(options: ResolvedTurn, core: TurnCore, attach: string): Promise<Backend> {
  const prepared = await prepareServerTurn(options, core, attach);
  const turn = prepared.turn;
  if (!turn) return { source: null, ops: null, problem: prepared.problem };
  const ops: SessionOps = {
    export: null,
    sessionId: turn.sessionId,
    delete: (id) =>
      turn.client.deleteSession(turn.directory, id).then(
        () => true as const,
        (error: Error) => ({ error: `deleting session ${id} on ${turn.client.shown} failed: ${error.message}` }),
      ),
  };
  return { source: serverSource(turn), ops, problem: null };
}
