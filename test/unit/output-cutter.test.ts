import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CUT_FROM, LineSplitter, type SplitLine } from "../../src/domain/events/line-splitter.js";
import { keepBytesFor, OutputCutter } from "../../src/domain/events/output-cutter.js";
import { capUtf8, toolEventOf } from "../../src/domain/events/tool-event.js";

/** Feeds `line` to a cutter in the given chunk sizes and returns the kept text. */
function cut(line: string, keep: number, chunkSizes: number[] = []): { text: string; cutBytes: number } {
  const bytes = Buffer.from(line);
  const cutter = new OutputCutter(keep);
  let at = 0;
  for (const size of chunkSizes) {
    cutter.push(bytes.subarray(at, Math.min(bytes.length, at + size)));
    at = Math.min(bytes.length, at + size);
  }
  cutter.push(bytes.subarray(at));
  expect(cutter.keptBytes + cutter.cutBytes).toBe(bytes.length);
  return { text: Buffer.concat(cutter.kept).toString("utf8"), cutBytes: cutter.cutBytes };
}

/** Every string under an "output" key of `cutValue` is a prefix of the original; all else is equal. */
function expectCutOf(original: unknown, cutValue: unknown, key: string | null = null): void {
  if (key === "output" && typeof original === "string") {
    expect(typeof cutValue).toBe("string");
    expect(original.startsWith(cutValue as string)).toBe(true);
    return;
  }
  if (original === null || typeof original !== "object") return expect(cutValue).toEqual(original);
  expect(Array.isArray(cutValue)).toBe(Array.isArray(original));
  if (Array.isArray(original)) {
    expect((cutValue as unknown[]).length).toBe(original.length);
    for (const [i, v] of original.entries()) expectCutOf(v, (cutValue as unknown[])[i], null);
    return;
  }
  expect(Object.keys(cutValue as object)).toEqual(Object.keys(original));
  for (const [k, v] of Object.entries(original)) expectCutOf(v, (cutValue as Record<string, unknown>)[k], k);
}

// Characters that stress the lexer: quotes, backslashes, escapes, multi-byte and astral characters.
const nasty = fc.string({
  unit: fc.constantFrom('"', "\\", "a", "é", "→", "😀", "\n", "\u0001", "\ud800", "u", ":", "output"),
  maxLength: 300,
});

describe("OutputCutter", () => {
  it("shortens output values only, and leaves valid JSON", () => {
    const long = "x".repeat(500);
    const line = JSON.stringify({
      type: "tool_use",
      output: long,
      text: long,
      part: { state: { output: long, metadata: { output: long } }, input: { output: 7, list: ["output", long] } },
    });
    const { text, cutBytes } = cut(line, 100);
    const parsed = JSON.parse(text);
    expect(parsed.output).toBe("x".repeat(100));
    expect(parsed.part.state.output).toBe("x".repeat(100));
    expect(parsed.part.state.metadata.output).toBe("x".repeat(100));
    expect(parsed.text).toBe(long);
    expect(parsed.part.input).toEqual({ output: 7, list: ["output", long] });
    expect(cutBytes).toBe(3 * 400);
  });

  it("never cuts inside an escape sequence or a UTF-8 character", () => {
    for (let keep = 1; keep < 20; keep++) {
      const value = 'ab\\"\n\u0001é😀\ud83d'.repeat(5);
      const { text } = cut(JSON.stringify({ output: value }), keep);
      const parsed = JSON.parse(text) as { output: string };
      expect(value.startsWith(parsed.output)).toBe(true);
      expect(parsed.output.length).toBeGreaterThan(0);
    }
  });

  it("any object, any chunking: valid JSON, output values are prefixes, everything else intact", () => {
    fc.assert(
      fc.property(
        fc.record({
          output: nasty,
          other: nasty,
          nested: fc.record({ output: fc.oneof(nasty, fc.jsonValue()), "output ": nasty }),
          any: fc.jsonValue(),
        }),
        fc.integer({ min: 1, max: 120 }),
        fc.array(fc.integer({ min: 1, max: 50 }), { maxLength: 20 }),
        (value, keep, chunks) => {
          const line = JSON.stringify(value);
          const { text } = cut(line, keep, chunks);
          expectCutOf(JSON.parse(line), JSON.parse(text));
          expect(cut(line, keep).text).toBe(text);
        },
      ),
    );
  });

  it("the capped tool output and its truncated flag are exactly those of the whole line", () => {
    fc.assert(
      fc.property(
        nasty,
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 30 }),
        (output, cap, chunks) => {
          const part = {
            type: "tool",
            tool: "bash",
            callID: "c1",
            state: { status: "completed", input: { command: "x" }, output, metadata: { output, exit: 0 } },
          };
          const line = JSON.stringify({ type: "tool_use", part });
          const shortened = JSON.parse(cut(line, keepBytesFor(cap), chunks).text) as { part: typeof part };
          expect(toolEventOf(shortened.part, cap)!.draft).toEqual(toolEventOf(part, cap)!.draft);
          expect(capUtf8(shortened.part.state.metadata.output, cap)).toEqual(capUtf8(output, cap));
        },
      ),
    );
  });
});

describe("LineSplitter with output cutting", () => {
  const split = (chunks: Buffer[], options: ConstructorParameters<typeof LineSplitter>[1]): SplitLine[] => {
    const out: SplitLine[] = [];
    const s = new LineSplitter((l) => out.push(l), options);
    for (const c of chunks) s.push(c);
    s.end();
    return out;
  };

  it("leaves lines under CUT_FROM alone, even with long outputs", () => {
    const line = JSON.stringify({ output: "y".repeat(CUT_FROM - 100) });
    const [got] = split([Buffer.from(`${line}\n`)], { outputKeepBytes: 1000 });
    expect(got).toEqual({ text: line, truncated: false, cut: false, bytes: Buffer.byteLength(line) });
  });

  it("cuts a 20 MB tool line as it streams, keeps what follows, and reports the line's real size", () => {
    const big = "z".repeat(10 * 1024 * 1024);
    const line = JSON.stringify({ type: "tool_use", part: { state: { output: big, metadata: { output: big } } } });
    const bytes = Buffer.from(`${line}\nnext\n`);
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += 65536) chunks.push(bytes.subarray(at, at + 65536));
    const [first, second] = split(chunks, { maxLineBytes: 16 * 1024 * 1024, outputKeepBytes: 1000 });
    expect(first!.cut).toBe(true);
    expect(first!.truncated).toBe(false);
    expect(first!.bytes).toBe(Buffer.byteLength(line));
    expect(JSON.parse(first!.text)).toEqual({
      type: "tool_use",
      part: { state: { output: "z".repeat(1000), metadata: { output: "z".repeat(1000) } } },
    });
    expect(second).toEqual({ text: "next", truncated: false, cut: false, bytes: 4 });
  });

  it("still enforces maxLineBytes on what the cutter keeps", () => {
    const text = "t".repeat(3 * 1024 * 1024);
    const line = JSON.stringify({ text });
    const [got] = split([Buffer.from(line)], { maxLineBytes: 2 * 1024 * 1024, outputKeepBytes: 1000 });
    expect(got!.truncated).toBe(true);
    expect(got!.text.length).toBe(2 * 1024 * 1024);
    expect(got!.bytes).toBe(Buffer.byteLength(line));
  });
});
