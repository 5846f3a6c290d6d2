// How a caller stops a running turn. Every stop (signal, caller's AbortSignal, timeout, budget)
// goes through one path in execute.ts; a second interrupt while stopping kills at once.
import type { StopReason } from "../outcome/classify.js";

export class TurnControl {
  private first: StopReason | null = null;
  private readonly listeners = new Set<(reason: StopReason) => void>();

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

  /** Forwards an AbortSignal; its reason may be a StopReason, anything else counts as an interrupt. */
  follow(signal: AbortSignal | undefined): void {
    if (!signal) return;
    const forward = () => {
      const r = signal.reason as Partial<StopReason> | undefined;
      this.abort(r && typeof r === "object" && typeof r.kind === "string" ? (r as StopReason) : { kind: "interrupted", signal: "abort" });
    };
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
  }
}
