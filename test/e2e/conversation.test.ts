// Conversations over stdin (--input-format jsonl) with the real opencode: turns in one session,
// each marked and closed by its result, one conversation.result last; limits per turn and in
// total; malformed lines; stdin closing; a signal while waiting for the next line.
import { describe, expect, it } from "vitest";
import type { ConversationResult, OcEvent, ResultEvent } from "../../src/contract/schema.js";
import { useE2E } from "../support/e2e.js";
import { useWarmServer } from "../support/warm-server.js";

const e2e = useE2E();
const server = useWarmServer(e2e);

/** The input: each turn as its JSON line; a `raw` line as written. */
const lines = (...turns: unknown[]) =>
  `${turns.map((t) => (typeof t === "object" && t !== null && "raw" in t ? (t as { raw: string }).raw : JSON.stringify(t))).join("\n")}\n`;
const results = (events: OcEvent[]) => events.filter((e): e is ResultEvent => e.type === "result");
const summary = (events: OcEvent[]) => events.at(-1) as ConversationResult;

describe("conversations over stdin", () => {
  it("3 turns in one session: the second sees what the first produced; each turn closes with its result", async () => {
    const run = await e2e.run(["-q", "--attach", server.url, "--input-format", "jsonl"], {
      stdin: lines({ prompt: "scenario:echo remember the word kiwi" }, "scenario:echo what was the word?", {
        prompt: "scenario:echo thanks",
      }),
    });
    expect(run.code).toBe(0);
    const turnResults = results(run.events);
    expect(turnResults.map((r) => [r.turn, r.class])).toEqual([
      [1, "success"],
      [2, "success"],
      [3, "success"],
    ]);
    // The scripted model answers from the conversation's first user message: turn 2 could only say
    // this if it was sent in the same session, after turn 1.
    expect(turnResults[1]!.text).toBe("you said: scenario:echo remember the word kiwi");
    expect(new Set(turnResults.map((r) => r.session_id)).size).toBe(1);
    const requests = e2e.requestsFor("remember the word kiwi");
    expect(requests.at(-1)!.body.messages.filter((m) => m.role === "user")).toHaveLength(3);
    expect(summary(run.events)).toMatchObject({
      type: "conversation.result",
      ok: true,
      exit_code: 0,
      input_errors: 0,
      session_id: turnResults[0]!.session_id,
    });
    expect(summary(run.events).turns.map((t) => t.turn)).toEqual([1, 2, 3]);
    expect(run.events.filter((e) => e.turn === undefined).map((e) => e.type)).toEqual(["conversation.result"]);
  });

  it("a malformed line is an error event; the session survives it; exit 1", async () => {
    const run = await e2e.run(["-q", "--attach", server.url, "--input-format", "jsonl"], {
      stdin: lines(
        { prompt: "scenario:plain one" },
        { raw: "not json" },
        { promt: "typo" },
        { prompt: "scenario:plain two" },
      ),
    });
    expect(run.code).toBe(1);
    const errors = run.events.filter((e) => e.type === "error" && e.turn === undefined);
    expect(errors.map((e) => (e.type === "error" ? e.message : ""))).toEqual([
      expect.stringMatching(/^input line 2: not JSON/),
      "input line 3: unknown field(s) promt; a turn has prompt and files; the line was skipped and the conversation goes on",
    ]);
    const turnResults = results(run.events);
    expect(turnResults.map((r) => r.class)).toEqual(["success", "success"]);
    expect(turnResults[0]!.session_id).toBe(turnResults[1]!.session_id);
    expect(summary(run.events)).toMatchObject({ ok: false, exit_code: 1, input_errors: 2 });
  });

  it("limits per turn and in total: --turn-max-steps stops a turn, the next runs; --max-tokens stops the conversation", async () => {
    const perTurn = await e2e.run(["-q", "--attach", server.url, "--input-format", "jsonl", "--turn-max-steps", "1"], {
      stdin: lines("scenario:tool run echo", "scenario:tool again"),
    });
    expect(results(perTurn.events).map((r) => [r.turn, r.class])).toEqual([
      [1, "budget_exceeded"],
      [2, "success"],
    ]);
    expect(results(perTurn.events)[0]!.error!.message).toBe(
      "--turn-max-steps 1 was crossed: opencode started step 2; oc-exec stopped it",
    );
    expect(perTurn.code).toBe(1);

    const total = await e2e.run(["-q", "--attach", server.url, "--input-format", "jsonl", "--max-tokens", "200"], {
      stdin: lines("scenario:plain a", "scenario:plain b", "scenario:plain c"),
    });
    expect(total.code).toBe(6);
    expect(results(total.events).map((r) => r.class)).toEqual(["success", "budget_exceeded"]);
    expect(results(total.events)[1]!.error!.message).toBe(
      "the conversation's --max-tokens 200 was crossed: the conversation used 256; oc-exec stopped this turn",
    );
    expect(summary(total.events)).toMatchObject({ exit_code: 6, ok: false });
  });

  it("a signal while waiting for the next line ends the conversation at once: exit 130, the result written", async () => {
    const started = Date.now();
    const run = await e2e.run(["-q", "--attach", server.url, "--input-format", "jsonl"], {
      stdin: "never",
      onStdout: (text, child) => {
        if (text.includes('"type":"result"')) child.kill("SIGINT");
      },
      onSpawn: (child) => child.stdin!.write(`${JSON.stringify({ prompt: "scenario:plain first" })}\n`),
    });
    expect(run.code).toBe(130);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(summary(run.events)).toMatchObject({ exit_code: 130, turns: [{ turn: 1, class: "success" }] });
  });

  it("on the opencode run backend too: two turns, one session, stdin closing ends it cleanly", async () => {
    const run = await e2e.run(["-q", "--input-format", "jsonl"], {
      stdin: lines("scenario:echo first on run", "scenario:echo second on run"),
    });
    expect(run.code).toBe(0);
    const turnResults = results(run.events);
    expect(turnResults.map((r) => r.text)).toEqual([
      "you said: scenario:echo first on run",
      "you said: scenario:echo first on run",
    ]);
    expect(turnResults[0]!.session_id).toBe(turnResults[1]!.session_id);
  });

  it("prompt arguments with --input-format jsonl: a usage error", async () => {
    const run = await e2e.run(["-q", "--input-format", "jsonl", "hello"]);
    expect(run.code).toBe(5);
    expect(run.result.error!.message).toBe(
      "--input-format jsonl reads every turn from stdin; give no prompt arguments or --prompt-file",
    );
  });
});
