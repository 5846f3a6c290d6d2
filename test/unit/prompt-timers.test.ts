// Prompt sources and the turn's timers, without processes: fake stdin streams and fake clocks.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { readPrompt } from "../../src/cli/prompt.js";
import { TurnTimers } from "../../src/engine/timers.js";

const stdinOf = (text: string | null, tty = false) => {
  const s = new PassThrough() as PassThrough & { isTTY?: boolean };
  s.isTTY = tty;
  if (text !== null) s.end(text);
  return s;
};

describe("readPrompt", () => {
  // Made in beforeAll: a run filtered past these tests (-t) must not leave the directory behind.
  let dir = "";
  let file = "";
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "oc-exec-prompt-"));
    file = join(dir, "task.md");
    writeFileSync(file, "From the file.");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("joins arguments, the prompt file and piped stdin with blank lines, in that order", async () => {
    const read = await readPrompt({
      args: ["Review", "this"],
      promptFile: file,
      stdin: stdinOf("the diff"),
      stdinTimeoutMs: 1000,
    });
    expect(read).toEqual({ text: "Review this\n\nFrom the file.\n\nthe diff", warnings: [] });
  });

  it("- waits for stdin, and stdin alone is the prompt byte for byte", async () => {
    expect(await readPrompt({ args: ["-"], promptFile: null, stdin: stdinOf("  exact\n"), stdinTimeoutMs: 1 })).toEqual(
      {
        text: "  exact\n",
        warnings: [],
      },
    );
  });

  it("a terminal is never read; no prompt at all is a usage error", async () => {
    expect(await readPrompt({ args: ["hi"], promptFile: null, stdin: stdinOf(null, true), stdinTimeoutMs: 1 })).toEqual(
      {
        text: "hi",
        warnings: [],
      },
    );
    await expect(
      readPrompt({ args: [], promptFile: null, stdin: stdinOf(null, true), stdinTimeoutMs: 1 }),
    ).rejects.toThrow(/^no prompt: pass it as arguments/);
    await expect(readPrompt({ args: [], promptFile: null, stdin: stdinOf(""), stdinTimeoutMs: 1 })).rejects.toThrow(
      "no prompt: stdin was empty and no prompt argument was given",
    );
    await expect(
      readPrompt({ args: ["x"], promptFile: "/nonexistent/p.md", stdin: stdinOf(""), stdinTimeoutMs: 1 }),
    ).rejects.toThrow("--prompt-file /nonexistent/p.md: no such file");
  });

  it("--no-stdin: a piped stdin is left unread, for the loop around oc-exec", async () => {
    const list = stdinOf("b.ts\nc.ts\n");
    const read = await readPrompt({
      args: ["Summarize a.ts"],
      promptFile: null,
      stdin: list,
      stdinTimeoutMs: 1000,
      noStdin: true,
    });
    expect(read).toEqual({ text: "Summarize a.ts", warnings: [] });
    expect(list.read()?.toString()).toBe("b.ts\nc.ts\n");
    await expect(
      readPrompt({ args: ["-"], promptFile: null, stdin: stdinOf("x"), stdinTimeoutMs: 1, noStdin: true }),
    ).rejects.toThrow("the prompt - means read stdin, but --no-stdin was given");
    await expect(
      readPrompt({ args: [], promptFile: null, stdin: stdinOf("x"), stdinTimeoutMs: 1, noStdin: true }),
    ).rejects.toThrow("no prompt: pass it as arguments or with --prompt-file FILE");
  });

  it("an empty prompt file is named, not blamed on stdin", async () => {
    const empty = join(dir, "empty.md");
    writeFileSync(empty, "  \n");
    await expect(readPrompt({ args: [], promptFile: empty, stdin: stdinOf(""), stdinTimeoutMs: 1 })).rejects.toThrow(
      `the prompt is empty: --prompt-file ${empty} is empty (or only white space), and stdin was empty`,
    );
    await expect(
      readPrompt({ args: [], promptFile: empty, stdin: stdinOf(null, true), stdinTimeoutMs: 1 }),
    ).rejects.toThrow(`the prompt is empty: --prompt-file ${empty} is empty (or only white space)`);
  });

  it("a silent pipe with a prompt in hand: a warning after --stdin-timeout, and the arguments alone", async () => {
    const read = await readPrompt({ args: ["hi"], promptFile: null, stdin: stdinOf(null), stdinTimeoutMs: 30 });
    expect(read.text).toBe("hi");
    expect(read.warnings).toEqual([
      {
        code: "stdin_timeout",
        message:
          "stdin is not a terminal but sent nothing within --stdin-timeout 30ms; going on with the prompt from the arguments only",
      },
    ]);
  });
});

describe("TurnTimers", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());
  const fired: [string, number][] = [];
  const timers = (limits: ConstructorParameters<typeof TurnTimers>[0]) => {
    fired.length = 0;
    return new TurnTimers(limits, (kind, ms) => fired.push([kind, ms]));
  };

  it("the start-up timer waits for the first JSON line; signs of life re-arm it", () => {
    const t = timers({ turnMs: null, startupMs: 1000, idleMs: null });
    t.start();
    vi.advanceTimersByTime(900);
    t.signOfLife();
    vi.advanceTimersByTime(900);
    expect(fired).toEqual([]);
    t.firstJson();
    vi.advanceTimersByTime(5000);
    expect(fired).toEqual([]);
  });

  it("the idle timer is re-armed by activity and paused while the consumer holds the turn back", () => {
    const t = timers({ turnMs: null, startupMs: null, idleMs: 1000 });
    t.start();
    vi.advanceTimersByTime(800);
    t.activity();
    vi.advanceTimersByTime(800);
    t.hold(true);
    vi.advanceTimersByTime(5000);
    expect(fired).toEqual([]);
    t.hold(false);
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual([["idle", 1000]]);
  });

  it("the idle timer runs from the first output: opencode's silent start is the start-up timer's", () => {
    const t = timers({ turnMs: null, startupMs: 60_000, idleMs: 1000, idleFromFirstOutput: true });
    t.start();
    vi.advanceTimersByTime(2500); // opencode starting, silent
    expect(fired).toEqual([]);
    t.activity(); // its first log line
    vi.advanceTimersByTime(900);
    t.activity();
    t.firstJson();
    vi.advanceTimersByTime(999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([["idle", 1000]]);
    // Held back before any output: nothing arms the idle timer but the output itself.
    const u = timers({ turnMs: null, startupMs: 60_000, idleMs: 1000, idleFromFirstOutput: true });
    u.start();
    u.hold(true);
    u.hold(false);
    vi.advanceTimersByTime(5000);
    expect(fired).toEqual([]);
    // On a server, nothing starts: the idle timer runs from the start.
    const v = timers({ turnMs: null, startupMs: 60_000, idleMs: 1000 });
    v.start();
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual([["idle", 1000]]);
  });

  it("only the first timer to fire counts; cleared timers never fire", () => {
    const t = timers({ turnMs: 500, startupMs: 600, idleMs: 700 });
    t.start();
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual([["turn", 500]]);
    const u = timers({ turnMs: 500, startupMs: null, idleMs: null });
    u.start();
    u.clear();
    u.hold(false);
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual([]);
  });
});
