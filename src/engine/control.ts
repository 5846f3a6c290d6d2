// How a caller steers a running turn. Every stop (signal, caller's AbortSignal, timeout, budget)
// goes through one path in execute.ts; a second interrupt while stopping kills at once.
// Flow control goes through here too: a consumer that cannot keep up says so, and the runner
// stops reading opencode's stdout until it can, so memory does not grow with the stream.
import type { StopReason } from "../domain/outcome/classify.js";

export class TurnControl {
  private first: StopReason | null = null;
  private readonly listeners = new Set<(reason: StopReason) => void>();
  private held = false;
  private readonly flowListeners = new Set<(held: boolean) => void>();
  private readonly starting = new AbortController();

  /**
   * Aborted when the turn is stopped before its backend is ready: what makes the backend (a binary
   * asked for its version) is given up then, not waited for.
   */
  get startup(): AbortSignal {
    return this.starting.signal;
  }

  /** The turn stopped before its backend was ready (execute.ts). */
  giveUpStartup(): void {
    this.starting.abort();
  }

  abort(reason: StopReason): void {
    this.first ??= reason;
    for (const listener of this.listeners) listener(reason);
  }

  get reason(): StopReason | null {
    return this.first;
  }

  subscribe(listener: (reason: StopReason) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The consumer is behind (true) or has caught up (false). Repeats are ignored. */
  backpressure(held: boolean): void {
    if (held === this.held) return;
    this.held = held;
    for (const listener of this.flowListeners) listener(held);
  }

  get isHeld(): boolean {
    return this.held;
  }

  onBackpressure(listener: (held: boolean) => void): () => void {
    this.flowListeners.add(listener);
    return () => this.flowListeners.delete(listener);
  }

  /** Forwards an AbortSignal; its reason may be a StopReason, anything else counts as an interrupt. */
  follow(signal: AbortSignal | null): void {
    if (!signal) return;
    const forward = () => {
      const r = signal.reason as Partial<StopReason> | undefined;
      this.abort(
        r && typeof r === "object" && typeof r.kind === "string"
          ? (r as StopReason)
          : { kind: "interrupted", signal: "abort" },
      );
    };
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
  }
}
