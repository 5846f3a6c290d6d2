// What opencode's stderr tells the classifier: the last lines (for a failure's message), its own
// "Error: ..." complaint with the lines that explain it, and whether it refused its configuration.
// The one writer of the turn facts' stderr fields; every line kept is clipped and redacted.
import { isConfigStderr } from "./error-class.js";
import { redact } from "./redact.js";
import type { TurnFacts } from "./turn-facts.js";

const STDERR_TAIL_LINES = 20;
const STDERR_LINE_CHARS = 2000;
const CONFIG_LINES = 5;

export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

type StderrFacts = Pick<TurnFacts, "stderrTail" | "stderrErrors" | "stderrConfigLines" | "stderrConfigError">;

export class StderrRecord {
  constructor(private readonly facts: StderrFacts) {}

  /** A line that may show a configuration problem. */
  configLine(text: string): void {
    if (!isConfigStderr(text)) return;
    this.facts.stderrConfigError = true;
    // 1.14 prints `  message: "Session not found: ses_x",` inside an error dump.
    const quoted = /^\s*message:\s*"(.*)",?\s*$/.exec(text);
    if (this.facts.stderrConfigLines.length < CONFIG_LINES)
      this.facts.stderrConfigLines.push(redact(clip(quoted ? quoted[1]! : text.trim(), STDERR_LINE_CHARS)));
  }

  /** Any line worth showing; `startsError` opens opencode's own error report (kept from there on). */
  tail(text: string, startsError = false): void {
    const clean = redact(clip(text, STDERR_LINE_CHARS));
    const errors = this.facts.stderrErrors;
    if ((startsError || errors.length > 0) && errors.length < STDERR_TAIL_LINES) errors.push(clean);
    this.facts.stderrTail.push(clean);
    if (this.facts.stderrTail.length > STDERR_TAIL_LINES) this.facts.stderrTail.shift();
  }
}
