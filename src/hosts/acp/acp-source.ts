// One turn through an ACP agent, as an upstream source: the agent started in its own process group,
// spoken to over its stdio with the official SDK (JSON-RPC 2.0, newline-delimited), one session
// made in the workspace, the prompt sent, and every session update translated into the lines the
// normalizer reads (domain/events/acp-translate.ts). oc-exec is the client: it offers no file system
// or terminal of its own, so the agent works in the workspace as it would alone. A permission the
// agent asks for is answered by the caller's policy: what --allow/--deny allow is granted, what
// they deny refused, the rest granted only under --auto; a refusal is remembered, since the agent
// then ends its turn normally. Its stderr is the source's log.
import { client, ndJsonStream, PROTOCOL_VERSION, type RequestPermissionResponse } from "@agentclientprotocol/sdk";
import { type AcpError, AcpTranslator, type AcpUsage, permissionOf } from "../../domain/events/acp-translate.js";
import { LineSplitter, type SplitterOptions } from "../../domain/events/line-splitter.js";
import type { Json } from "../../domain/events/upstream.js";
import type { SourceEnd, UpstreamSource } from "../../domain/events/upstream-source.js";
import { policyAction } from "../../domain/opencode/permissions.js";
import { startProcess } from "../../sys/process.js";

export type AcpTurn = {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  prompt: string;
  /** provider/model, set through the session's model option when the agent offers one. */
  model: string | null;
  /** --allow/--deny as a permission config (OPENCODE_PERMISSION's shape), or null for none. */
  policy: Record<string, unknown> | null;
  /** --auto: grant what the policy does not decide; otherwise it is refused (nobody can answer). */
  auto: boolean;
  killAfterMs: number;
  split: SplitterOptions;
  /** What the command is called in messages (--acp's value). */
  shown: string;
};

const isRequestError = (e: unknown): e is AcpError =>
  typeof e === "object" && e !== null && typeof (e as AcpError).code === "number" && "message" in e;

export function acpSource(turn: AcpTurn): UpstreamSource {
  return {
    // Its `initialize` takes a second or more for the agents that start a server of their own.
    startsOpencode: true,
    start(sink) {
      const emit = (lines: Json[]) => {
        for (const line of lines) {
          const text = JSON.stringify(line);
          sink.eventLine({ text, truncated: false, cut: false, bytes: Buffer.byteLength(text) });
        }
      };
      // The agent's last words, for the message when it goes away.
      let lastLog = "";
      const stderr = new LineSplitter((line) => {
        if (line.text.trim() !== "") lastLog = line.text.trim();
        sink.logLine(line.text);
      }, turn.split);
      let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
      const fromAgent = new ReadableStream<Uint8Array>({
        start: (c) => {
          controller = c;
        },
      });
      let held = false;
      const queued: Uint8Array[] = [];
      const running = startProcess(
        { file: turn.file, args: turn.args, env: turn.env, cwd: turn.cwd, input: "" },
        {
          stdout: (chunk) => {
            const bytes = new Uint8Array(chunk);
            if (held) queued.push(bytes);
            else controller?.enqueue(bytes);
          },
          stderr: (chunk) => stderr.push(chunk),
        },
        { keepInputOpen: true },
      );
      const toAgent = new WritableStream<Uint8Array>({ write: (chunk) => running.write(chunk) });
      let translator: AcpTranslator | null = null;
      let cancel: (() => void) | null = null;
      let stopping = false;
      let finished = false;

      const app = client()
        .onRequest("session/request_permission", ({ params }): RequestPermissionResponse => {
          const options = params.options;
          const pick = (kinds: string[]) => options.find((o) => kinds.includes(o.kind));
          const { key, subject } = permissionOf(params.toolCall as unknown as Json);
          const said = turn.policy ? policyAction(turn.policy, key, subject) : null;
          const grant = said === "allow" || (said !== "deny" && turn.auto);
          // Once, never "always": the next call is asked for, and answered, on its own.
          const allow = grant ? (pick(["allow_once"]) ?? pick(["allow_always"])) : undefined;
          if (allow) return { outcome: { outcome: "selected", optionId: allow.optionId } };
          if (translator) emit(translator.refused(params.toolCall as unknown as Json));
          const reject = pick(["reject_once", "reject_always"]);
          return reject
            ? { outcome: { outcome: "selected", optionId: reject.optionId } }
            : { outcome: { outcome: "cancelled" } };
        })
        .onNotification("session/update", ({ params }) => {
          if (translator && params.sessionId === sessionId) emit(translator.update(params.update as unknown as Json));
        });

      let sessionId: string | null = null;
      const conversation = app.connectWith(ndJsonStream(toAgent, fromAgent), async (ctx) => {
        await ctx.request("initialize", {
          protocolVersion: PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        });
        const session = await ctx.request("session/new", { cwd: turn.cwd, mcpServers: [] });
        sessionId = session.sessionId;
        translator = new AcpTranslator(session.sessionId);
        if (turn.model) {
          const option = (session.configOptions ?? []).find((o) => o.category === "model");
          if (!option) {
            emit(
              translator.error({
                code: -32602,
                message: `${turn.shown} offers no model to choose, so -m ${turn.model} cannot apply; leave -m out to use the agent's own`,
                data: { errorName: "ConfigInvalidError" },
              }),
            );
            return;
          }
          await ctx.request("session/set_config_option", {
            sessionId: session.sessionId,
            configId: option.id,
            value: turn.model,
          } as never);
        }
        cancel = () => void ctx.notify("session/cancel", { sessionId: session.sessionId }).catch(() => {});
        if (stopping) cancel();
        try {
          const response = await ctx.request("session/prompt", {
            sessionId: session.sessionId,
            prompt: [{ type: "text", text: turn.prompt }],
          });
          // usage: in the response (opencode), not yet in ACP's stable schema.
          const { usage } = response as { usage?: AcpUsage };
          emit(translator.finish(response.stopReason, usage ?? null));
        } catch (error) {
          if (!isRequestError(error)) throw error;
          emit(translator.error(error));
        }
      });

      const done = conversation
        .then(
          () => null,
          (error: unknown) => error,
        )
        .then(async (error): Promise<SourceEnd> => {
          finished = true;
          // The turn is over (or the agent is gone): the agent's process goes with it.
          running.endInput();
          running.stop({ graceMs: turn.killAfterMs });
          const ended = await running.done;
          stderr.end();
          if (ended.spawnError !== null)
            return {
              process: null,
              failure: { name: "AcpAgentNotFound", message: `could not start ${turn.shown}: ${ended.spawnError}` },
              lost: null,
            };
          if (error === null || stopping) return { process: null, failure: null, lost: null };
          const how = ended.signal ? `killed by ${ended.signal}` : `exit ${ended.exitCode}`;
          const what = isRequestError(error) ? error.message : error instanceof Error ? error.message : String(error);
          // The agent started and then failed the conversation: the turn's failure, not the caller's.
          return {
            process: null,
            failure: null,
            lost: {
              name: "AcpAgentFailed",
              message: `${turn.shown} ended the conversation (${how}${lastLog ? `; it said: ${lastLog}` : ""}): ${what}`,
            },
          };
        });
      // Whatever the agent wrote is read to the end once it exits.
      void running.done.then(() => {
        for (const bytes of queued.splice(0)) controller?.enqueue(bytes);
        try {
          controller?.close();
        } catch {
          // Already closed.
        }
      });

      return {
        done,
        hold: (hold) => {
          held = hold;
          if (!hold) for (const bytes of queued.splice(0)) controller?.enqueue(bytes);
        },
        stop(force) {
          stopping = true;
          if (finished) return;
          cancel?.();
          running.stop({ force, term: false, graceMs: turn.killAfterMs });
        },
      };
    },
  };
}
