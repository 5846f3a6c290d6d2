// One ACP agent for a run: started once in its own process group, spoken to over its stdio with the
// official SDK (JSON-RPC 2.0, newline-delimited), initialized once (what run.started says of it),
// and asked for a session per turn (a conversation's turns share the agent, as the issue of warm
// reuse asks). oc-exec is the client: it offers no file system or terminal of its own, so the agent
// works in the workspace as it would alone. A permission the agent asks for is answered by the
// caller's policy: what --allow/--deny allow is granted once, what they deny refused, the rest
// granted only under --auto; a refusal is remembered, since the agent then ends its turn normally.
// Its stderr is the current turn's log. Each turn's updates become the lines the normalizer reads
// (domain/events/acp-translate.ts).

import { StringDecoder } from "node:string_decoder";
import {
  type ClientConnection,
  client,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionResponse,
} from "@agentclientprotocol/sdk";
import {
  type AcpError,
  AcpTranslator,
  permissionOf,
  tolerantLine,
  usageOf,
} from "../../domain/events/acp-translate.js";
import { LineSplitter, type SplitterOptions } from "../../domain/events/line-splitter.js";
import type { Json } from "../../domain/events/upstream.js";
import type { SourceEnd, UpstreamSource } from "../../domain/events/upstream-source.js";
import { policyAction } from "../../domain/opencode/permissions.js";
import { formatDuration } from "../../kernel/duration.js";
import type { LaunchProblem } from "../../kernel/problem.js";
import { type RunningProcess, type StreamHandlers, startProcess } from "../../sys/process.js";

export type AcpAgentSpec = {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** How long the agent may take to answer `initialize`, and what set it; null = no limit. */
  startup: { ms: number; option: string } | null;
  killAfterMs: number;
  split: SplitterOptions;
  /** What the agent is called in messages (--acp's value). */
  shown: string;
  /** Aborted when the turn stops before the agent is ready. */
  signal?: AbortSignal;
  /** Written on its stdin before the protocol (the ssh script's preamble, when the agent runs on a host). */
  input?: string;
  /** A stderr line of the launcher's own (the ssh script's markers), not the agent's: taken, never logged. */
  ownLine?(line: string): boolean;
  /**
   * Speak to an agent that already runs (a warm one, hosts/warm/warm-agent.ts) over this link
   * instead of starting `file` in a process of the run's own.
   */
  link?: (handlers: StreamHandlers) => AgentLink;
};

/**
 * The agent's bytes both ways, and its end: its own process's stdio, or a warm agent's socket. `keep`
 * on stop: the agent answered every turn and may serve another run (a warm agent stays; a process
 * of the run's own ends all the same).
 */
export type AgentLink = Pick<RunningProcess, "done" | "write" | "endInput"> & {
  stop(how: { graceMs: number; force?: boolean; keep?: boolean }): void;
};

/** What the agent said of itself in `initialize`: what run.started reports. */
export type AcpAgentInfo = { name: string | null; version: string | null; protocolVersion: number };

export type AcpTurn = {
  cwd: string;
  /** A session to continue (a conversation's next turn, another attempt, a --verify repair), or null for a new one. */
  session: string | null;
  prompt: string;
  /** provider/model, set through the session's model option when the agent offers one. */
  model: string | null;
  /** --allow/--deny as a permission config (OPENCODE_PERMISSION's shape), or null for none. */
  policy: Record<string, unknown> | null;
  /** --auto: grant what the policy does not decide; otherwise it is refused (nobody can answer). */
  auto: boolean;
  split: SplitterOptions;
};

export type AcpAgent = {
  info: AcpAgentInfo;
  /** Whether a turn can continue this session: one this agent made in the run, or any it can load. */
  canContinue(session: string): boolean;
  /** One turn: a new session in `cwd`, the prompt, its updates as lines. */
  turn(turn: AcpTurn): UpstreamSource;
  /**
   * Whether the agent can serve another turn at once: it runs, no turn is running, and none was
   * stopped or lost it (a batch's next task may have it).
   */
  idle(): boolean;
  /** Ends the agent and everything it started. */
  close(): Promise<void>;
};

/** What the current turn does with what the agent sends. */
type TurnHandlers = {
  log(line: string): void;
  update(sessionId: string, update: Json): void;
  permission(sessionId: string, toolCall: Json): boolean;
};

/**
 * How long an idle agent has to end by itself once its stdin is closed and it was sent SIGTERM,
 * before SIGKILL: every turn of the run answered, it has nothing of the run's left to write.
 * gemini-cli sits ~0.6 s after a tool turn before it exits (its event loop waiting, no syscalls:
 * strace), which every run would otherwise pay; the others end within 0.1 s.
 */
const SETTLING_GRACE_MS = 250;

const isRequestError = (e: unknown): e is AcpError =>
  typeof e === "object" && e !== null && typeof (e as AcpError).code === "number" && "message" in e;

export async function startAcpAgent(spec: AcpAgentSpec): Promise<AcpAgent | { problem: LaunchProblem }> {
  let current: TurnHandlers | null = null;
  // The agent's last words, for the message when it goes away.
  let lastLog = "";
  const stderr = new LineSplitter((line) => {
    if (spec.ownLine?.(line.text)) return;
    if (line.text.trim() !== "") lastLog = line.text.trim();
    current?.log(line.text);
  }, spec.split);
  // The agent's stdout as the SDK reads it. Once the stream is closed (the agent gone) or cancelled
  // (the connection closed), what a leftover holder of the pipe still writes is dropped: never an
  // exception in a pipe's data handler.
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  let open = true;
  const fromAgent = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    cancel: () => {
      open = false;
    },
  });
  const enqueue = (bytes: Uint8Array) => {
    if (open) controller?.enqueue(bytes);
  };
  let held = false;
  const queued: Uint8Array[] = [];
  // Whole lines go on to the SDK, each made acceptable where an agent bends the schema (tolerantLine).
  let partial = "";
  const decoder = new StringDecoder("utf8");
  const encoder = new TextEncoder();
  const handlers: StreamHandlers = {
    stdout: (chunk) => {
      partial += decoder.write(chunk);
      const end = partial.lastIndexOf("\n");
      if (end === -1) return;
      const lines = partial.slice(0, end + 1);
      partial = partial.slice(end + 1);
      const bytes = encoder.encode(lines.split("\n").map(tolerantLine).join("\n"));
      if (held) queued.push(bytes);
      else enqueue(bytes);
    },
    stderr: (chunk) => stderr.push(chunk),
  };
  const running: AgentLink = spec.link
    ? spec.link(handlers)
    : startProcess(
        { file: spec.file, args: spec.args, env: spec.env, cwd: spec.cwd, input: spec.input ?? "" },
        handlers,
        { keepInputOpen: true },
      );
  const hold = (on: boolean) => {
    held = on;
    if (!on) for (const bytes of queued.splice(0)) enqueue(bytes);
  };
  let ended: Awaited<typeof running.done> | null = null;
  const gone = running.done.then((end) => {
    ended = end;
    stderr.end();
    // A last line without its newline.
    partial += decoder.end();
    if (partial !== "") queued.push(encoder.encode(tolerantLine(partial)));
    partial = "";
    // Whatever the agent wrote is read to the end once it exits.
    hold(false);
    if (open) controller?.close();
    open = false;
    return end;
  });
  const toAgent = new WritableStream<Uint8Array>({ write: (chunk) => running.write(chunk) });

  const connection: ClientConnection = client()
    .onRequest("session/request_permission", ({ params }): RequestPermissionResponse => {
      const options = params.options;
      const pick = (kinds: string[]) => options.find((o) => kinds.includes(o.kind));
      const grant = current?.permission(params.sessionId, params.toolCall as unknown as Json) ?? false;
      // Once, never "always": the next call is asked for, and answered, on its own.
      const allow = grant ? (pick(["allow_once"]) ?? pick(["allow_always"])) : undefined;
      if (allow) return { outcome: { outcome: "selected", optionId: allow.optionId } };
      const reject = pick(["reject_once", "reject_always"]);
      return reject
        ? { outcome: { outcome: "selected", optionId: reject.optionId } }
        : { outcome: { outcome: "cancelled" } };
    })
    .onNotification("session/update", ({ params }) => {
      current?.update(params.sessionId, params.update as unknown as Json);
    })
    .connect(ndJsonStream(toAgent, fromAgent));

  /**
   * Ends the agent: its stdin closed, then its whole process group after the grace (at once: force).
   * An idle agent, its turns all answered, gets the short settling grace instead of --kill-after's.
   */
  const end = async (force = false, graceMs = spec.killAfterMs, keep = false) => {
    connection.close();
    running.endInput();
    running.stop({ graceMs, force, keep });
    await gone;
  };
  const how = (end: NonNullable<typeof ended>) => (end.signal ? `killed by ${end.signal}` : `exit ${end.exitCode}`);

  // initialize, within --startup-timeout and until the turn stops.
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<"timeout">((resolve) => {
    if (spec.startup) timer = setTimeout(() => resolve("timeout"), spec.startup.ms);
  });
  const aborted = new Promise<"aborted">((resolve) => {
    if (spec.signal?.aborted) resolve("aborted");
    spec.signal?.addEventListener("abort", () => resolve("aborted"), { once: true });
  });
  const initialized = connection.agent
    .request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    })
    .then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
  const first = await Promise.race([initialized, limit, aborted, gone.then(() => "gone" as const)]);
  clearTimeout(timer);
  if (first === "gone" || first === "timeout" || first === "aborted" || "error" in first) {
    const stopped = first === "aborted";
    await end(true);
    const end_ = ended as Awaited<typeof running.done> | null;
    if (end_?.spawnError)
      return { problem: { name: "AcpAgentNotFound", message: `could not start ${spec.shown}: ${end_.spawnError}` } };
    const said = lastLog ? `; it said: ${lastLog}` : "";
    const message =
      first === "timeout"
        ? `${spec.shown} did not answer ACP's initialize within ${spec.startup!.option} ${formatDuration(spec.startup!.ms, "exact")}${said}`
        : stopped
          ? `${spec.shown} was stopped before it answered ACP's initialize`
          : first !== "gone" && isRequestError(first.error)
            ? `${spec.shown} refused ACP's initialize: ${first.error.message}${said}`
            : `${spec.shown} ended before it answered ACP's initialize (${end_ ? how(end_) : "no answer"}${said})`;
    return { problem: { name: "AcpAgentFailed", message } };
  }
  const { agentInfo, protocolVersion } = first.value as {
    agentInfo?: { name?: unknown; version?: unknown } | null;
    protocolVersion: number;
  };
  const info: AcpAgentInfo = {
    name: typeof agentInfo?.name === "string" ? agentInfo.name : null,
    version: typeof agentInfo?.version === "string" ? agentInfo.version : null,
    protocolVersion,
  };
  const canLoad =
    (first.value as { agentCapabilities?: { loadSession?: unknown } }).agentCapabilities?.loadSession === true;
  // The sessions this agent made in the run: a later turn continues one without loading it.
  const sessions = new Set<string>();
  // What each of those sessions offers to configure (its model), as session/new or session/load said.
  const sessionOptions = new Map<string, { id: string; category?: string | null }[]>();

  // Whether a turn is running, and whether one was stopped or lost the agent: such an agent may still
  // be busy with it, so it serves no other turn and gets the whole grace at its end.
  let busy = false;
  let spent = false;
  const idle = () => ended === null && !busy && !spent;

  return {
    info,
    canContinue: (session) => sessions.has(session) || canLoad,
    idle,
    close: () => (idle() ? end(false, SETTLING_GRACE_MS, true) : end(false, spec.killAfterMs)),
    turn: (turn) => ({
      // Started and initialized before run.started (its start judged by --startup-timeout there): the
      // turn's first update waits on the model, which is --idle-timeout's to judge, not a start-up's.
      // (A model that thinks for minutes before its first token would otherwise be stopped as a
      // start-up that never happened.)
      ready: true,
      start(sink) {
        busy = true;
        const emit = (lines: Json[]) => {
          for (const line of lines) {
            const text = JSON.stringify(line);
            sink.eventLine({ text, truncated: false, cut: false, bytes: Buffer.byteLength(text) });
          }
        };
        let translator: AcpTranslator | null = null;
        let sessionId: string | null = null;
        let cancel: (() => void) | null = null;
        let stopping = false;
        let finished = false;
        let killer: NodeJS.Timeout | undefined;
        current = {
          log: (line) => sink.logLine(line),
          update: (id, update) => {
            if (translator && id === sessionId) emit(translator.update(update));
          },
          permission: (id, toolCall) => {
            // Another session's (an earlier run's on a warm or shared agent, still at work): not
            // this turn's to grant.
            if (id !== sessionId) return false;
            const { key, subject } = permissionOf(toolCall);
            const said = turn.policy ? policyAction(turn.policy, key, subject) : null;
            const grant = said === "allow" || (said !== "deny" && turn.auto);
            if (!grant && translator) emit(translator.refused(toolCall));
            return grant;
          },
        };
        const agent = connection.agent;
        const run = (async () => {
          if (ended) throw new Error("the agent is gone");
          let id: string;
          let configOptions: { id: string; category?: string | null }[] = [];
          if (turn.session !== null && sessions.has(turn.session)) {
            id = turn.session;
            configOptions = sessionOptions.get(id) ?? [];
          } else if (turn.session !== null) {
            // An earlier run's session: loading it replays its history as updates, which are not
            // this turn's (no translator yet: they are dropped).
            const loaded = await agent.request("session/load", {
              sessionId: turn.session,
              cwd: turn.cwd,
              mcpServers: [],
            });
            id = turn.session;
            configOptions = (loaded as { configOptions?: typeof configOptions } | null)?.configOptions ?? [];
          } else {
            const session = await agent.request("session/new", { cwd: turn.cwd, mcpServers: [] });
            id = session.sessionId;
            configOptions = session.configOptions ?? [];
          }
          sessions.add(id);
          if (!sessionOptions.has(id)) sessionOptions.set(id, configOptions);
          sessionId = id;
          translator = new AcpTranslator(id, info.name);
          if (turn.model) {
            const option = configOptions.find((o) => o.category === "model");
            if (!option) {
              emit(
                translator.error({
                  code: -32602,
                  message: `${spec.shown} offers no model to choose, so -m ${turn.model} cannot apply; leave -m out to use the agent's own`,
                  data: { errorName: "ConfigInvalidError" },
                }),
              );
              return;
            }
            await agent.request("session/set_config_option", {
              sessionId: id,
              configId: option.id,
              value: turn.model,
            } as never);
          }
          cancel = () => void agent.notify("session/cancel", { sessionId: id }).catch(() => {});
          if (stopping) cancel();
          try {
            const response = await agent.request("session/prompt", {
              sessionId: id,
              prompt: [{ type: "text", text: turn.prompt }],
            });
            // Usage: in the response (opencode) or its _meta (gemini), not yet in ACP's stable schema.
            emit(translator.finish(response.stopReason, usageOf(response as unknown as Json)));
          } catch (error) {
            if (!isRequestError(error)) throw error;
            emit(translator.error(error));
          }
        })();
        const done = run
          .then(
            () => null,
            (error: unknown) => error,
          )
          .then(async (error): Promise<SourceEnd> => {
            finished = true;
            busy = false;
            clearTimeout(killer);
            current = null;
            if (error !== null || stopping) spent = true;
            if (error === null) return { process: null, failure: null, lost: null };
            // A stopped turn whose agent had to be ended: the stop's class, not the agent's failure.
            const end = await Promise.race([gone, new Promise<null>((r) => setTimeout(() => r(null), 1000))]);
            if (stopping) return { process: null, failure: null, lost: null };
            const what = isRequestError(error) ? error.message : error instanceof Error ? error.message : String(error);
            // The agent started and then failed the conversation: the turn's failure, not the caller's.
            return {
              process: null,
              failure: null,
              lost: {
                name: "AcpAgentFailed",
                message: `${spec.shown} ended the conversation (${end ? how(end) : "it stopped answering"}${lastLog ? `; it said: ${lastLog}` : ""}): ${what}`,
              },
            };
          });
        return {
          done,
          hold,
          stop(force) {
            stopping = true;
            if (finished) return;
            spent = true;
            cancel?.();
            // A cancelled prompt answers `cancelled`; an agent that does not, within the grace, is
            // ended with everything it started (the run's later turns then find it gone).
            if (force) void end(true);
            else killer ??= setTimeout(() => void end(true), spec.killAfterMs);
          },
        };
      },
    }),
  };
}
