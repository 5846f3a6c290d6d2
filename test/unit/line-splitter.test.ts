import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineSplitter, type SplitLine } from "../../src/domain/events/line-splitter.js";
import { capUtf8 } from "../../src/domain/events/tool-event.js";

function split(chunks: Buffer[], max?: number): SplitLine[] {
  const out: SplitLine[] = [];
  const s = new LineSplitter((l) => out.push(l), { maxLineBytes: max });
  for (const c of chunks) s.push(c);
  s.end();
  return out;
}

describe("LineSplitter", () => {
  it.each([
    ["a\nb\n", ["a", "b"]],
    ["a\r\nb\r\n", ["a", "b"]],
    ["a\nlast", ["a", "last"]],
    ["\n\n", ["", ""]],
    ["", []],
    ["x\r", ["x"]],
  ])("%j -> %j", (input, expected) => {
    expect(split([Buffer.from(input)]).map((l) => l.text)).toEqual(expected);
  });

  it("cuts a line over the limit, reports it, and keeps the next line whole", () => {
    const lines = split(
      [Buffer.from("short\n"), Buffer.alloc(50, 0x61), Buffer.alloc(50, 0x62), Buffer.from("\nnext\n")],
      64,
    );
    expect(lines.map((l) => [l.text.length, l.truncated, l.bytes])).toEqual([
      [5, false, 5],
      [64, true, 100],
      [4, false, 4],
    ]);
    expect(lines[2]!.text).toBe("next");
  });

  it("replaces invalid UTF-8 instead of throwing", () => {
    expect(split([Buffer.from([0x61, 0xff, 0xfe, 0x62, 0x0a])])[0]!.text).toBe("a\ufffd\ufffdb");
  });

  it("keeps multi-byte characters split across chunks", () => {
    const bytes = Buffer.from("héllo→world\n");
    expect(split([bytes.subarray(0, 2), bytes.subarray(2, 7), bytes.subarray(7)])[0]!.text).toBe("héllo→world");
  });

  it("any chunking of any bytes yields the same lines as splitting the whole", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.array(fc.nat(400), { maxLength: 10 }), (data, cuts) => {
        const whole = split([Buffer.from(data)]);
        const points = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
        const chunks: Buffer[] = [];
        let prev = 0;
        for (const p of points) {
          chunks.push(Buffer.from(data.subarray(prev, p)));
          prev = p;
        }
        chunks.push(Buffer.from(data.subarray(prev)));
        expect(split(chunks)).toEqual(whole);
      }),
    );
  });
});

describe("capUtf8", () => {
  it.each([
    ["short", 10, "short", false],
    ["abcdefghij", 10, "abcdefghij", false],
    ["abcdefghijk", 10, "abcdefghij", true],
    ["ééééé", 9, "éééé", true],
    ["ééééé", 10, "ééééé", false],
    ["→→→→", 7, "→→", true],
  ])("%j capped at %d bytes", (text, max, expected, truncated) => {
    expect(capUtf8(text, max)).toEqual({ text: expected, truncated });
  });

  it("never splits a character and never exceeds the cap", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.integer({ min: 1, max: 64 }), (text, max) => {
        const capped = capUtf8(text, max);
        expect(Buffer.byteLength(capped.text)).toBeLessThanOrEqual(
          Math.max(max, Buffer.byteLength(text) <= max ? Buffer.byteLength(text) : 0),
        );
        expect(text.startsWith(capped.text)).toBe(true);
        expect(capped.truncated).toBe(capped.text !== text);
      }),
    );
  });
});
