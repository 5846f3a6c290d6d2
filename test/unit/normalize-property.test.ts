// Property: for any byte stream cut into any chunks, the core never throws, every event is valid
// against the published schema, seq is contiguous, and exactly one result comes last.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { validateStream } from "../../src/contract/validate-stream.js";
import { fixtureVersions, loadFixture } from "../support/fixtures.js";
import { replayStreams } from "../support/replay.js";

const realLines = fixtureVersions().flatMap((v) =>
  ["plain", "tool", "permission-ask", "api-401", "unknown-model", "context-overflow"].flatMap((s) => {
    const f = loadFixture(v, s);
    return f ? f.stdout.toString("utf8").split("\n").filter(Boolean) : [];
  }),
);

const line = fc.oneof(
  fc.constantFrom(...realLines),
  fc.string(),
  fc.json(),
  fc.jsonValue().map((v) => JSON.stringify({ type: "step_finish", part: { tokens: v, cost: v, reason: v } })),
  fc.jsonValue().map((v) => JSON.stringify({ type: "tool_use", part: { tool: "bash", state: v } })),
  fc.jsonValue().map((v) => JSON.stringify({ type: "error", error: v })),
  fc.jsonValue().map((v) => JSON.stringify({ type: "text", sessionID: v, part: { text: v } })),
  fc.constant("! permission requested: bash (x); auto-rejecting"),
);

const toChunks = (bytes: Buffer, cuts: number[]) => {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  out.push(bytes.subarray(prev));
  return out;
};

describe("normalizer properties", () => {
  it("any lines, any chunking, any bytes: valid events, contiguous seq, one result last", () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 30 }),
        fc.uint8Array({ maxLength: 64 }),
        fc.array(fc.nat(5000), { maxLength: 12 }),
        fc.option(fc.integer({ min: -1, max: 255 }), { nil: null }),
        (lines, noise, cuts, exitCode) => {
          const bytes = Buffer.concat([Buffer.from(`${lines.join("\n")}\n`), Buffer.from(noise)]);
          const r = replayStreams(Buffer.concat(toChunks(bytes, cuts)), "", { exitCode });
          const { problems } = validateStream([r.started, ...r.events].map((e) => JSON.stringify(e)));
          expect(problems).toEqual([]);
          expect(r.events.filter((e) => e.type === "result")).toHaveLength(1);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the same bytes give the same events whatever the chunking", () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 20 }), fc.array(fc.nat(5000), { maxLength: 12 }), (lines, cuts) => {
        const bytes = Buffer.from(lines.join("\n"));
        const whole = replayStreams(bytes, "");
        // replayStreams splits internally; feeding pre-cut chunks must not change anything.
        const cut = replayStreams(Buffer.concat(toChunks(bytes, cuts)), "");
        expect(cut.events).toEqual(whole.events);
      }),
      { numRuns: 200 },
    );
  });
});
