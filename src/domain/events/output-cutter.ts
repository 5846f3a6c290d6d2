// Shortens one huge JSON line while it streams in, before it is ever whole in memory: the value
// of every string member named "output" keeps its first `keep` raw bytes and the rest is skipped.
// opencode repeats a tool's output in state.output and state.metadata.output, so a 10 MB tool
// result arrives as a 20 MB line; oc-exec only ever reports the first --max-output-bytes of it.
//
// The kept prefix always ends between two characters (never inside an escape sequence or a UTF-8
// sequence), so the shortened line is still valid JSON. Each JSON character is at most 6 raw
// bytes (\uXXXX): keeping 8 × maxOutputBytes raw bytes leaves more than maxOutputBytes of text,
// so the capped output and its truncated flag come out exactly as from the whole line.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const KEY = [0x6f, 0x75, 0x74, 0x70, 0x75, 0x74]; // "output"

const isSpace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/** Raw bytes an output string keeps, for a given --max-output-bytes. */
export const keepBytesFor = (maxOutputBytes: number) => 8 * maxOutputBytes + 64;

export class OutputCutter {
  /** The bytes kept so far (copies: the caller may reuse its chunks). */
  readonly kept: Buffer[] = [];
  keptBytes = 0;
  cutBytes = 0;

  private inString = false;
  /** Inside a string: bytes left in the current escape; -1 right after a backslash. */
  private escape = 0;
  /** This string is the value of an "output" member. */
  private outputValue = false;
  /** Raw content bytes of the current string so far. */
  private stringBytes = 0;
  /** The current string's content still matches "output" (for keys). */
  private keyMatch = true;
  /** The last string closed was the key "output", and since then: only whitespace, then a colon. */
  private afterKey = false;
  private afterColon = false;
  /** Skipping the rest of a cut string; true when the skipped bytes end in an odd backslash run. */
  private skipping = false;
  private skipOddBackslashes = false;

  constructor(private readonly keep: number) {}

  push(piece: Buffer): void {
    let keepFrom = 0;
    let i = 0;
    const n = piece.length;
    while (i < n) {
      if (this.skipping) {
        const close = this.findClose(piece, i);
        if (close === -1) {
          this.cutBytes += n - i;
          return;
        }
        this.cutBytes += close - i;
        this.skipping = false;
        this.inString = false;
        keepFrom = close; // the closing quote is kept
        i = close + 1;
        continue;
      }
      const b = piece[i]!;
      if (!this.inString) {
        if (b === QUOTE) this.open();
        else if (b === COLON) this.afterColon = this.afterKey && !this.afterColon;
        else if (!isSpace(b)) this.afterKey = this.afterColon = false;
        i++;
        continue;
      }
      if (this.escape === 0) {
        if (this.outputValue && this.stringBytes >= this.keep && (b & 0xc0) !== 0x80) {
          // Cut here: between characters, outside any escape.
          this.keepRange(piece, keepFrom, i);
          this.skipping = true;
          this.skipOddBackslashes = false;
          continue;
        }
        if (b === QUOTE) {
          this.close();
          i++;
          continue;
        }
        if (b === BACKSLASH) this.escape = -1;
      } else if (this.escape === -1)
        this.escape = b === 0x75 ? 4 : 0; // \uXXXX
      else this.escape--;
      if (this.keyMatch) this.keyMatch = this.stringBytes < KEY.length && KEY[this.stringBytes] === b;
      this.stringBytes++;
      i++;
    }
    this.keepRange(piece, keepFrom, n);
  }

  private open(): void {
    this.inString = true;
    this.escape = 0;
    this.stringBytes = 0;
    this.keyMatch = true;
    this.outputValue = this.afterKey && this.afterColon;
    this.afterKey = this.afterColon = false;
  }

  private close(): void {
    this.inString = false;
    // A string that is exactly "output" may be a key; the colon after it decides.
    this.afterKey = this.keyMatch && this.stringBytes === KEY.length && !this.outputValue;
    this.afterColon = false;
  }

  /** The next unescaped quote at or after `from`, or -1; keeps the backslash parity across pieces. */
  private findClose(piece: Buffer, from: number): number {
    let search = from;
    for (;;) {
      const q = piece.indexOf(QUOTE, search);
      const end = q === -1 ? piece.length : q;
      let run = 0;
      while (end - run - 1 >= from && piece[end - run - 1] === BACKSLASH) run++;
      const odd = end - run === from ? (run % 2 === 1) !== this.skipOddBackslashes : run % 2 === 1;
      if (q === -1) {
        this.skipOddBackslashes = odd;
        return -1;
      }
      if (!odd) return q;
      // An escaped quote: everything up to it is behind us, so the parity restarts there.
      this.skipOddBackslashes = false;
      from = search = q + 1;
    }
  }

  private keepRange(piece: Buffer, start: number, end: number): void {
    if (end <= start) return;
    this.kept.push(Buffer.from(piece.subarray(start, end)));
    this.keptBytes += end - start;
  }
}
