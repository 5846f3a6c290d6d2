// Text that reaches a terminal, a CI log or a step summary from somewhere oc-exec does not control
// (a tasks file, a shard's stream, opencode's own words): control characters and lone surrogates
// are shown escaped, never sent, so a hostile file cannot move the cursor or hide a line.
export function printable(text: string): string {
  return text.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly what is escaped
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * Text for one line of a log: printable, and its line breaks shown as `\n`, so no line starts where
 * oc-exec did not start one. A CI runner reads a line that starts with `::` as a command (GitHub
 * Actions: `::add-mask::`, `::stop-commands::`, annotations), from stderr as from stdout; a file
 * name the agent chose (`a\n::stop-commands::x`) must not become one.
 */
export function printableLine(text: string): string {
  return printable(text).replace(/\n/g, "\\n");
}

/** At most `max` problems, the rest counted: a 1 MB file of garbage is not 4,000 lines of report. */
export function capProblems(problems: string[], max = 20): string[] {
  if (problems.length <= max) return problems.map(printable);
  return [...problems.slice(0, max).map(printable), `… and ${problems.length - max} more problem(s), not listed`];
}
