// Splits a byte stream into lines, whatever the chunking. Memory stays bounded: a line longer than
// maxLineBytes is cut, the rest of it up to the next newline is skipped, and the line is reported
// as truncated so the caller can warn. CRLF endings lose their CR; a last line without a newline
// is delivered by end().
export type SplitLine = { text: string; truncated: boolean; bytes: number };

const NEWLINE = 0x0a;
const CR = 0x0d;
const decoder = new TextDecoder("utf-8", { fatal: false });

export class LineSplitter {
  private parts: Buffer[] = [];
  private held = 0;
  private dropping = false;
  private droppedBytes = 0;

  constructor(
    private readonly onLine: (line: SplitLine) => void,
    private readonly maxLineBytes = 16 * 1024 * 1024,
  ) {}

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
    if (this.held > 0 || this.dropping) this.flush();
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.dropping) {
      this.droppedBytes += piece.length;
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

  private flush(): void {
    let buf = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.held);
    if (!this.dropping && buf.length > 0 && buf[buf.length - 1] === CR) buf = buf.subarray(0, buf.length - 1);
    const truncated = this.dropping;
    const bytes = this.held + this.droppedBytes;
    this.parts = [];
    this.held = 0;
    this.dropping = false;
    this.droppedBytes = 0;
    this.onLine({ text: decoder.decode(buf), truncated, bytes });
  }
}
