// Builds an NDJSON corpus from the shapes real opencode prints (recorded fixtures): steps, text,
// tool calls with large outputs, and a few 10 MB lines. Deterministic for a given size.
// As in the recordings, every step is a new assistant message with parts of its own: a corpus
// whose 6,000 steps share one message ID would make the final message 6,000 texts long.
import { createWriteStream } from "node:fs";
import { loadFixture } from "../support/fixtures.js";

export async function writeCorpus(
  path: string,
  targetBytes: number,
  hugeLines = 3,
  /** Event-dense: short texts and one-line tool outputs, ~300,000 lines in 100 MB. */
  dense = false,
): Promise<{ bytes: number; lines: number }> {
  const tool = loadFixture("1.18.33", "tool")!.stdout.toString("utf8").trim().split("\n");
  // biome-ignore lint/suspicious/noExplicitAny: recorded lines are spread and patched field by field below.
  const [stepStart, toolUse, stepFinish, , text] = tool.map((l) => JSON.parse(l) as Record<string, any>);
  const out = createWriteStream(path);
  let bytes = 0;
  let lines = 0;
  const put = async (obj: unknown) => {
    const line = `${JSON.stringify(obj)}\n`;
    bytes += Buffer.byteLength(line);
    lines++;
    if (!out.write(line)) await new Promise<void>((r) => out.once("drain", () => r()));
  };
  const filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(40); // ~2.3 KB
  let i = 0;
  const hugeEvery = Math.max(1, Math.floor(targetBytes / (hugeLines + 1)));
  let nextHuge = hugeLines > 0 ? hugeEvery : Infinity;
  while (bytes < targetBytes) {
    i++;
    const ids = (kind: string) => ({ id: `prt_bench${kind}${i}`, messageID: `msg_bench${i}` });
    await put({ ...stepStart, timestamp: i, part: { ...stepStart!.part, ...ids("s") } });
    await put({
      ...text,
      part: { ...text!.part, ...ids("t"), text: dense ? `step ${i} done` : `step ${i}: ${filler.slice(0, 200)}` },
    });
    const big = bytes >= nextHuge;
    if (big) nextHuge += hugeEvery;
    const output = big ? "x".repeat(10 * 1024 * 1024) : dense ? `ok ${i}\n` : `${filler}\n`.repeat(1 + (i % 8));
    await put({
      ...toolUse,
      part: {
        ...toolUse!.part,
        ...ids("u"),
        callID: `call_${i}`,
        state: { ...toolUse!.part.state, output, metadata: { output, exit: 0, truncated: false } },
      },
    });
    await put({ ...stepFinish, part: { ...stepFinish!.part, ...ids("f"), reason: "tool-calls" } });
  }
  await new Promise<void>((r) => out.end(r));
  return { bytes, lines };
}
