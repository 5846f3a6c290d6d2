// Splits a byte stream into lines, whatever the chunking. Memory stays bounded: a line longer than
// maxLineBytes is cut, the rest of it up to the next newline is skipped, and the line is reported
// as truncated so the caller can warn. CRLF endings lose their CR; a last line without a newline
// is delivered by end().
//
// With outputKeepBytes set (stdout), a line that grows past CUT_FROM bytes goes through an
// OutputCutter from then on: huge tool outputs are shortened as they arrive, so a 20 MB tool
// line costs a few hundred KB, not 20 MB plus its copies. Smaller lines never pay for it.
import { OutputCutter } from "./output-cutter.js";

export type SplitLine = {
  text: string;
  /** Over maxLineBytes: text is only the line's beginning. */
  truncated: boolean;
  /** "output" values were shortened: text is valid JSON, but not opencode's line verbatim. */
  cut: boolean;
  /** The line's size as opencode wrote it. */
  bytes: number;
};

export type SplitterOptions = { maxLineBytes?: number; outputKeepBytes?: number | null };

const NEWLINE = 0x0a;
const CR = 0x0d;
/** Lines below this are held whole and never scanned; see output-cutter.ts. */
export const CUT_FROM = 1024 * 1024;
const decoder = new TextDecoder("utf-8", { fatal: false });

export class LineSplitter {
  private parts: Buffer[] = [];
  private held = 0;
  private dropping = false;
  private droppedBytes = 0;
  private cutter: OutputCutter | null = null;
  private readonly maxLineBytes: number;
  private readonly outputKeepBytes: number | null;

  constructor(
    private readonly onLine: (line: SplitLine) => void,
    options: SplitterOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? 16 * 1024 * 1024;
    this.outputKeepBytes = options.outputKeepBytes ?? null;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      this.take(chunk.subarray(start, end));
      if (nl === -1) return;
      this.flush();
      start = nl + 1;
    }
  }

  end(): void {
    if (this.held > 0 || this.dropping || this.cutter) this.flush();
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.dropping) {
      this.droppedBytes += piece.length;
      return;
    }
    if (this.cutter === null && this.outputKeepBytes !== null && this.held + piece.length > CUT_FROM) {
      // From here on the line goes through the cutter, starting again from its first byte.
      const cutter = new OutputCutter(this.outputKeepBytes);
      for (const part of this.parts) cutter.push(part);
      this.parts = cutter.kept;
      this.cutter = cutter;
    }
    if (this.cutter) {
      this.cutter.push(piece);
      this.held = this.cutter.keptBytes;
      if (this.held > this.maxLineBytes) this.startDropping();
      return;
    }
    const room = this.maxLineBytes - this.held;
    if (piece.length > room) {
      if (room > 0) this.parts.push(Buffer.from(piece.subarray(0, room)));
      this.held += Math.max(room, 0);
      this.dropping = true;
      this.droppedBytes = piece.length - Math.max(room, 0);
      return;
    }
    // Copy: the caller may reuse its chunk buffer.
    this.parts.push(this.parts.length === 0 && piece.length === piece.buffer.byteLength ? piece : Buffer.from(piece));
    this.held += piece.length;
  }

  /** The cutter kept more than maxLineBytes: trim what it kept to the limit and skip the rest. */
  private startDropping(): void {
    const whole = Buffer.concat(this.parts, this.held);
    this.droppedBytes = this.held - this.maxLineBytes;
    this.parts = [whole.subarray(0, this.maxLineBytes)];
    this.held = this.maxLineBytes;
    this.dropping = true;
  }

  private flush(): void {
    let buf = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.held);
    if (!this.dropping && buf.length > 0 && buf[buf.length - 1] === CR) buf = buf.subarray(0, buf.length - 1);
    const truncated = this.dropping;
    const cutBytes = this.cutter?.cutBytes ?? 0;
    const bytes = this.held + this.droppedBytes + cutBytes;
    this.parts = [];
    this.held = 0;
    this.dropping = false;
    this.droppedBytes = 0;
    this.cutter = null;
    this.onLine({ text: decoder.decode(buf), truncated, cut: cutBytes > 0, bytes });
  }
}
