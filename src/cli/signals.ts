// The one signal wiring of the CLI: SIGINT stops as `interrupted` (130), SIGTERM and SIGHUP as
// `terminated` (143). Whatever runs (a turn, a conversation, a batch) is stopped through its
// TurnControl, so the stop takes the one abort path and the result line is still written.
import type { StopReason } from "../domain/outcome/classify.js";

const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** Calls `stop` for each stop signal until the returned function is called. */
export function onStopSignals(stop: (reason: StopReason, signal: NodeJS.Signals) => void): () => void {
  const handler = (signal: NodeJS.Signals) =>
    stop(signal === "SIGINT" ? { kind: "interrupted", signal } : { kind: "terminated", signal }, signal);
  for (const s of STOP_SIGNALS) process.on(s, handler);
  return () => {
    for (const s of STOP_SIGNALS) process.off(s, handler);
  };
}
