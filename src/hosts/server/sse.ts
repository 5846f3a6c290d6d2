// A server-sent events parser (the WHATWG event-stream format): bytes in, one callback per event's
// data. Pure and incremental, so a chunk may end anywhere, even inside a UTF-8 character or
// between "\r" and "\n". opencode's server only sends `data:` lines; ids, retry hints and named
// events are read past, comments (": ...") are keep-alives.
export class SseParser {
  private readonly decoder = new TextDecoder();
  private buffer = "";
  private data: string[] = [];
  /** The previous chunk ended with "\r": a "\n" starting the next one belongs to it. */
  private pendingCr = false;

  constructor(private readonly onData: (data: string) => void) {}

  push(chunk: Uint8Array): void {
    let text = this.decoder.decode(chunk, { stream: true });
    if (this.pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.pendingCr = text.endsWith("\r");
    // Only the new text is searched for line breaks: a 10 MB line arriving in 64 KB chunks must
    // not be rescanned on every chunk.
    const breaks = /\r\n|\r|\n/g;
    let start = 0;
    let match: RegExpExecArray | null = breaks.exec(text);
    if (!match) {
      this.buffer += text;
      return;
    }
    this.line(this.buffer + text.slice(0, match.index));
    this.buffer = "";
    start = match.index + match[0].length;
    for (match = breaks.exec(text); match; match = breaks.exec(text)) {
      this.line(text.slice(start, match.index));
      start = match.index + match[0].length;
    }
    this.buffer = text.slice(start);
  }

  /** The stream ended: an event without its closing blank line is incomplete and dropped, per the spec. */
  end(): void {
    this.buffer = "";
    this.data = [];
  }

  private line(line: string): void {
    if (line === "") {
      if (this.data.length > 0) this.onData(this.data.join("\n"));
      this.data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== "data") return;
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    this.data.push(value);
  }
}
