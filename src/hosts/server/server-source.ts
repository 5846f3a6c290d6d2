// A turn on a running opencode server as an upstream source (the seam in domain/events/upstream-source.ts):
// subscribe to the workspace's event stream, send the prompt, translate the session's events into
// the lines the normalizer reads, answer each permission from the policy, and end when the session
// goes idle. Stopping aborts the session through the API: the turn stops, its tools end, and the
// server stays up for the next turn.
import { appendFileSync } from "node:fs";
import { type PermissionAsked, ServerTranslator } from "../../domain/events/server-translate.js";
import type { SourceEnd, UpstreamSource } from "../../domain/events/upstream-source.js";
import { type PromptBody, SERVER_ERROR_NAMES, type ServerClient, ServerError } from "./client.js";

export type ServerTurn = {
  client: ServerClient;
  directory: string;
  sessionId: string;
  body: PromptBody;
  /** Approve what the session's rules leave to `ask` (--auto); otherwise it is rejected, as `opencode run` does. */
  auto: boolean;
  deltas: boolean;
  /** After an abort, how long the session has to go idle before oc-exec stops waiting. */
  killAfterMs: number;
  /** Append the session's raw events to this file (OC_EXEC_RECORD_EVENTS): what `oc-exec replay` reads. */
  recordTo: string | null;
  /** The recording is written too: secrets out of it. */
  redact: (text: string) => string;
};

const failureOf = (error: unknown): NonNullable<SourceEnd["failure"]> => {
  if (!(error instanceof ServerError)) throw error;
  return { name: SERVER_ERROR_NAMES[error.kind], message: error.message };
};

export function serverSource(turn: ServerTurn): UpstreamSource {
  const { client, directory, sessionId } = turn;
  return {
    start(sink) {
      const translator = new ServerTranslator({ sessionId, deltas: turn.deltas });
      const line = (value: unknown) => {
        const text = JSON.stringify(value);
        sink.eventLine({ text, truncated: false, cut: false, bytes: Buffer.byteLength(text) });
      };
      let idle = false;
      let held = false;
      let wake: (() => void) | null = null;
      let stopping = false;
      let gaveUp = false;
      let graceTimer: NodeJS.Timeout | null = null;
      let closeStream: (() => void) | null = null;
      const replies: Promise<void>[] = [];

      const answer = (request: PermissionAsked) => {
        // The refusal reaches the normalizer as the server confirms it (permission.replied).
        const reply = turn.auto && !stopping ? "once" : "reject";
        replies.push(
          client.replyPermission(directory, request.id, reply).catch((error: Error) => {
            sink.logLine(`oc-exec could not answer permission ${request.permission} (${request.id}): ${error.message}`);
          }),
        );
      };

      const handle = (data: string) => {
        if (turn.recordTo) record(turn.recordTo, sessionId, data, turn.redact);
        for (const t of translator.translate(data)) {
          if (t.kind === "line") line(t.line);
          else if (t.kind === "permission") answer(t.request);
          else if (t.kind === "question") replies.push(client.rejectQuestion(directory, t.request.id).catch(() => {}));
          else idle = true;
        }
      };

      const giveUp = () => {
        gaveUp = true;
        closeStream?.();
        wake?.();
      };

      const done = (async (): Promise<SourceEnd> => {
        let stream: Awaited<ReturnType<ServerClient["events"]>>;
        try {
          stream = await client.events(directory, handle);
          closeStream = () => stream.close();
          if (gaveUp) stream.close();
          await client.prompt(directory, sessionId, turn.body);
        } catch (error) {
          closeStream?.();
          return { process: null, failure: failureOf(error), lost: null };
        }
        let lost: SourceEnd["lost"] = null;
        while (!idle && !gaveUp) {
          if (held) await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
          if (gaveUp) break;
          let more: boolean;
          try {
            more = await stream.pump();
          } catch (error) {
            if (gaveUp) break;
            lost = await lostWhy(client, `its event stream broke (${(error as Error).message})`);
            break;
          }
          if (!more && !gaveUp) {
            lost = await lostWhy(client, "it closed its event stream");
            break;
          }
        }
        stream.close();
        if (graceTimer) clearTimeout(graceTimer);
        await Promise.all(replies);
        return { process: null, failure: null, lost };
      })();

      return {
        done,
        hold(value) {
          held = value;
          if (!value) wake?.();
        },
        stop(force) {
          if (force) return giveUp();
          if (stopping) return;
          stopping = true;
          translator.expectAbort();
          client.abort(directory, sessionId).catch((error: Error) => {
            sink.logLine(`oc-exec could not abort session ${sessionId}: ${error.message}`);
            giveUp();
          });
          graceTimer = setTimeout(giveUp, turn.killAfterMs);
        },
      };
    },
  };
}

/** The turn's events stopped before it ended: is the server gone, or only the stream? */
async function lostWhy(client: ServerClient, what: string): Promise<NonNullable<SourceEnd["lost"]>> {
  try {
    await client.health();
    return {
      name: "EventStreamLost",
      message: `the opencode server at ${client.shown} still answers, but ${what} before the turn ended; the turn's outcome is unknown`,
    };
  } catch (error) {
    return {
      name: "ServerLost",
      message: `the opencode server at ${client.shown} went away mid-turn: ${what}, and it no longer answers (${(error as Error).message})`,
    };
  }
}

function record(file: string, sessionId: string, data: string, redact: (text: string) => string): void {
  try {
    const event = JSON.parse(data) as { properties?: { sessionID?: unknown } };
    if (event.properties?.sessionID === sessionId) appendFileSync(file, `${redact(data)}\n`);
  } catch {
    // Not JSON: nothing the replay could use either.
  }
}
