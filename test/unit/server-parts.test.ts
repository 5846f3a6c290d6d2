// The server backend's pure parts, without a server: the SSE parser, the translation of server
// events into the lines the normalizer reads, the permission ruleset, and the recorded server
// streams replayed to the same events and class the live run reported.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ServerTranslator } from "../../src/domain/events/server-translate.js";
import { rulesetOf } from "../../src/domain/opencode/permissions.js";
import { SseParser } from "../../src/hosts/server/sse.js";
import { replayRecording } from "../support/replay.js";

const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;

describe("SseParser", () => {
  const parse = (chunks: (string | Uint8Array)[]) => {
    const out: string[] = [];
    const parser = new SseParser((d) => out.push(d));
    for (const c of chunks) parser.push(typeof c === "string" ? new TextEncoder().encode(c) : c);
    parser.end();
    return out;
  };

  it("splits events on blank lines, whatever the chunking, with LF, CRLF or CR", () => {
    const text = 'data: {"a":1}\n\ndata: {"b":2}\r\n\r\ndata: {"c":3}\r\rdata: tail-without-blank';
    const whole = parse([text]);
    expect(whole).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
    for (let i = 1; i < text.length; i++) expect(parse([text.slice(0, i), text.slice(i)])).toEqual(whole);
    expect(parse(text.split(""))).toEqual(whole);
  });

  it("joins multi-line data, skips comments and other fields, keeps a UTF-8 character cut between chunks", () => {
    expect(parse([": keep-alive\nid: 7\nevent: x\ndata: one\ndata:two\n\n"])).toEqual(["one\ntwo"]);
    const bytes = new TextEncoder().encode('data: {"t":"héllo ✓"}\n\n');
    expect(parse([bytes.slice(0, 14), bytes.slice(14, 20), bytes.slice(20)])).toEqual(['{"t":"héllo ✓"}']);
  });
});

describe("ServerTranslator", () => {
  const ev = (type: string, properties: object) => JSON.stringify({ id: "evt_1", type, properties });
  const S = "ses_1";

  it("passes on one session's steps, complete texts and finished tools as run lines; the step names its model", () => {
    const t = new ServerTranslator({ sessionId: S, deltas: false });
    const lines = [
      ev("session.status", { sessionID: S, status: { type: "busy" } }),
      ev("message.updated", { sessionID: S, info: { id: "msg_1", role: "assistant", providerID: "p", modelID: "m" } }),
      ev("message.part.updated", { sessionID: S, part: { id: "prt_1", messageID: "msg_1", type: "step-start" } }),
      ev("message.part.updated", { sessionID: "ses_other", part: { id: "prt_9", type: "step-start" } }),
      ev("message.part.updated", { sessionID: S, part: { id: "prt_2", type: "text", text: "", time: { start: 1 } } }),
      ev("message.part.delta", { sessionID: S, partID: "prt_2", field: "text", delta: "Hi" }),
      ev("message.part.updated", {
        sessionID: S,
        part: { id: "prt_2", type: "text", text: "Hi", time: { start: 1, end: 2 } },
      }),
      ev("message.part.updated", {
        sessionID: S,
        part: { id: "prt_3", type: "tool", tool: "bash", state: { status: "pending" } },
      }),
      ev("message.part.updated", {
        sessionID: S,
        part: { id: "prt_3", type: "tool", tool: "bash", state: { status: "running" } },
      }),
      ev("message.part.updated", {
        sessionID: S,
        part: { id: "prt_3", type: "tool", tool: "bash", state: { status: "running", metadata: { output: "h" } } },
      }),
      ev("message.part.updated", {
        sessionID: S,
        part: { id: "prt_3", type: "tool", tool: "bash", state: { status: "completed" } },
      }),
      ev("message.part.updated", {
        sessionID: S,
        part: { id: "prt_4", messageID: "msg_1", type: "step-finish", reason: "stop" },
      }),
      ev("message.part.updated", {
        sessionID: S,
        part: { id: "prt_4", messageID: "msg_1", type: "step-finish", reason: "stop" },
      }),
      ev("session.idle", { sessionID: S }),
    ].flatMap((l) => t.translate(l));
    expect(lines.map((l) => (l.kind === "line" ? `${l.line.type}` : l.kind))).toEqual([
      "step_start",
      "text",
      "tool_use",
      "tool_use",
      "step_finish",
      "idle",
    ]);
    expect(lines[4]).toMatchObject({ kind: "line", line: { type: "step_finish", model: "p/m", sessionID: S } });
  });

  it("an idle before the session went busy is a previous turn's; text deltas only when asked for", () => {
    const t = new ServerTranslator({ sessionId: S, deltas: true });
    expect(t.translate(ev("session.idle", { sessionID: S }))).toEqual([]);
    t.translate(ev("message.part.updated", { sessionID: S, part: { id: "prt_2", type: "text", text: "" } }));
    t.translate(ev("message.part.updated", { sessionID: S, part: { id: "prt_r", type: "reasoning", text: "" } }));
    expect(t.translate(ev("message.part.delta", { sessionID: S, partID: "prt_2", field: "text", delta: "a" }))).toEqual(
      [{ kind: "line", line: { type: "text_delta", sessionID: S, partID: "prt_2", messageID: null, delta: "a" } }],
    );
    expect(t.translate(ev("message.part.delta", { sessionID: S, partID: "prt_r", field: "text", delta: "b" }))).toEqual(
      [],
    );
    t.translate(ev("session.status", { sessionID: S, status: { type: "busy" } }));
    expect(t.translate(ev("session.idle", { sessionID: S }))).toEqual([{ kind: "idle" }]);
  });

  it("a refused permission or question becomes one line with what was asked; an abort's own error is dropped", () => {
    const t = new ServerTranslator({ sessionId: S, deltas: false });
    const asked = t.translate(
      ev("permission.asked", {
        id: "per_1",
        sessionID: S,
        permission: "bash",
        patterns: ["a", "b"],
        tool: { callID: "c1" },
      }),
    );
    expect(asked).toEqual([
      { kind: "permission", request: { id: "per_1", permission: "bash", patterns: ["a", "b"], callId: "c1" } },
    ]);
    expect(t.translate(ev("permission.replied", { sessionID: S, requestID: "per_1", reply: "reject" }))).toEqual([
      {
        kind: "line",
        line: { type: "permission_rejected", sessionID: S, permission: "bash", patterns: ["a", "b"], callID: "c1" },
      },
    ]);
    t.translate(ev("permission.asked", { id: "per_2", sessionID: S, permission: "read", patterns: ["x"] }));
    expect(t.translate(ev("permission.replied", { sessionID: S, requestID: "per_2", reply: "once" }))).toEqual([]);
    t.translate(ev("question.asked", { id: "que_1", sessionID: S, questions: [{ question: "Why?" }] }));
    expect(t.translate(ev("question.rejected", { sessionID: S, requestID: "que_1" }))).toEqual([
      { kind: "line", line: { type: "question_rejected", sessionID: S, questions: ["Why?"], callID: null } },
    ]);
    const aborted = ev("session.error", { sessionID: S, error: { name: "MessageAbortedError", data: {} } });
    expect(t.translate(aborted)).toHaveLength(1);
    t.expectAbort();
    expect(t.translate(aborted)).toEqual([]);
    expect(t.translate("not json")).toEqual([]);
  });
});

describe("rulesetOf", () => {
  it("keeps the config's order (the last matching rule wins) and drops what is not an action", () => {
    expect(rulesetOf({ "*": "deny", bash: { "*": "ask", "git *": "allow" }, read: "allow", x: 5 })).toEqual([
      { permission: "*", pattern: "*", action: "deny" },
      { permission: "bash", pattern: "*", action: "ask" },
      { permission: "bash", pattern: "git *", action: "allow" },
      { permission: "read", pattern: "*", action: "allow" },
    ]);
    expect(rulesetOf("ask")).toEqual([{ permission: "*", pattern: "*", action: "ask" }]);
    expect(rulesetOf([1])).toEqual([]);
  });
});

describe("recorded server streams", () => {
  const dirs = readdirSync(FIXTURES).filter((d) => d.startsWith("server-"));
  const cases = dirs.flatMap((d) =>
    readdirSync(join(FIXTURES, d)).map((s) => [`${d}/${s}`, join(FIXTURES, d, s)] as const),
  );
  it("there are recordings", () => expect(cases.length).toBeGreaterThanOrEqual(12));
  it.each(cases)("%s replays to the events and class of the live run", (_name, dir) => {
    const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as {
      session_id: string;
      args: string[];
      live: { exit_code: number; class: string; types: string[] };
    };
    expect(existsSync(join(dir, "stdout.txt"))).toBe(false);
    const { events, result } = replayRecording({
      stdout: readFileSync(join(dir, "events.jsonl")),
      serverSession: meta.session_id,
      deltas: meta.args.includes("--text-deltas"),
      workspace: "/tmp/oc-exec-fixture/workspace",
    });
    expect(result.class).toBe(meta.live.class);
    expect(result.exit_code).toBe(meta.live.exit_code);
    expect(result.opencode).toEqual({ exit_code: null, signal: null });
    expect(events.map((e) => e.type)).toEqual(meta.live.types);
  });
});

describe("a server recording names its model", () => {
  it("result.model is the model its steps name, as in the live run (it was null in replay)", () => {
    const dir = join(FIXTURES, "server-1.18.33", "plain");
    const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as { session_id: string };
    const { events, result } = replayRecording({
      stdout: readFileSync(join(dir, "events.jsonl")),
      serverSession: meta.session_id,
      workspace: "/tmp/oc-exec-fixture/workspace",
    });
    const step = events.find((e) => e.type === "step.finished");
    expect(step).toMatchObject({ model: "fake/fake-model" });
    expect(result.model).toBe("fake/fake-model");
  });
});
