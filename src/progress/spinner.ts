// The one place ora is configured. The caller has already decided that a live line belongs on this
// stream (a terminal, not --quiet), so ora must not decide again: left to itself it switches off
// whenever CI is set, printing its first text once and never redrawing, which leaves a stale line
// above everything printed after it. And a batch or a turn never reads the keyboard, so stdin is
// left alone (ora would otherwise put it in raw mode and handle Ctrl-C itself).
import type { Ora } from "ora";

/**
 * Whether a live line may be drawn on this stream: a terminal, and not one that cannot move the
 * cursor (TERM=dumb) or whose user asked for no escapes (NO_COLOR, --color never).
 */
export function canDrawLiveLine(
  stream: { isTTY?: boolean },
  env: NodeJS.ProcessEnv,
  color: "auto" | "always" | "never" = "auto",
): boolean {
  const noEscapes = ("NO_COLOR" in env && env.NO_COLOR !== "") || env.TERM === "dumb" || color === "never";
  return Boolean(stream.isTTY) && !noEscapes;
}

/** ora is loaded only here, on first use: CI logs and --quiet never pay for it. */
export async function createSpinner(stream: NodeJS.WriteStream, text = ""): Promise<Ora> {
  const { default: ora } = await import("ora");
  return ora({ stream, text, discardStdin: false, isEnabled: true });
}
