// Stamps drafts with seq, time and session_id and hands them to one sink. The only place that
// numbers events, so seq stays contiguous whoever emits.
import type { EventDraft, OcEvent } from "../../contract/schema.js";

export type Clock = () => number;

export class Emitter {
  private seq = 0;
  private closed = false;
  private lastMs = Number.NaN;
  private lastIso = "";

  constructor(
    private readonly sink: (event: OcEvent) => void,
    private readonly sessionId: () => string | null,
    private readonly clock: Clock = Date.now,
  ) {}

  emit(draft: EventDraft): void {
    if (this.closed) return;
    // type, seq, time and session_id lead every line, so a human scanning the JSONL sees them first.
    const { type, ...fields } = draft;
    const event = {
      type,
      seq: this.seq++,
      time: this.now(),
      session_id: this.sessionId(),
      ...fields,
    } as OcEvent;
    if (event.type === "result") this.closed = true;
    this.sink(event);
  }

  /** The time, formatted once per millisecond: a dense stream writes many events in one. */
  private now(): string {
    const ms = this.clock();
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastIso = new Date(ms).toISOString();
    }
    return this.lastIso;
  }

  get count(): number {
    return this.seq;
  }

  get isClosed(): boolean {
    return this.closed;
  }
}
