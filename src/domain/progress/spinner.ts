// The one place ora is configured. The caller has already decided that a live line belongs on this
// stream (a terminal, not --quiet), so ora must not decide again: left to itself it switches off
// whenever CI is set, printing its first text once and never redrawing, which leaves a stale line
// above everything printed after it. And a batch or a turn never reads the keyboard, so stdin is
// left alone (ora would otherwise put it in raw mode and handle Ctrl-C itself).
import type { Ora } from "ora";

/**
 * The narrowest terminal a live line is drawn in. ora divides by the width to count the lines it
 * must erase: a terminal that reports 0 columns (a pty nobody sized, `script` under CI) made it
 * erase forever, synchronously, starving the timers and the signal handlers.
 */
const MIN_COLUMNS = 20;

/**
 * Whether a live line may be drawn on this stream: a terminal with a usable width, and not one that
 * cannot move the cursor (TERM=dumb) or whose user asked for no escapes (NO_COLOR, --color never).
 */
export function canDrawLiveLine(
  stream: { isTTY?: boolean; columns?: number },
  env: NodeJS.ProcessEnv,
  color: "auto" | "always" | "never" = "auto",
): boolean {
  const noEscapes = ("NO_COLOR" in env && env.NO_COLOR !== "") || env.TERM === "dumb" || color === "never";
  return Boolean(stream.isTTY) && (stream.columns ?? 0) >= MIN_COLUMNS && !noEscapes;
}

/**
 * ora is loaded only here, on first use: CI logs and --quiet never pay for it. It sees the stream
 * through a view whose width never drops below MIN_COLUMNS: a terminal resized to nothing while the
 * line is drawn gets a line that wraps, not a loop that never ends.
 */
export async function createSpinner(stream: NodeJS.WriteStream, text = ""): Promise<Ora> {
  const { default: ora } = await import("ora");
  return ora({ stream: withUsableWidth(stream), text, discardStdin: false, isEnabled: true });
}

function withUsableWidth(stream: NodeJS.WriteStream): NodeJS.WriteStream {
  return new Proxy(stream, {
    get(target, key) {
      if (key === "columns") return Math.max(target.columns || 0, MIN_COLUMNS);
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
