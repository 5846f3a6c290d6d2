// Errors oc-exec raises on purpose. A ConfigError is the user's to fix (flags, files, workspace)
// and ends as class config_error; anything else that escapes is an internal error.
export class ConfigError extends Error {
  override readonly name: string;
  constructor(message: string, name = "ConfigError") {
    super(message);
    this.name = name;
  }
}

/** An exception as a message: its stack when it has one (a bug is reported with where it happened). */
export const errorText = (error: unknown) => (error instanceof Error ? (error.stack ?? error.message) : String(error));

/** How a bug in oc-exec is reported, in a result and in a batch's or conversation's. */
export const bugMessage = (what: string) => `oc-exec failed: ${what}. This is a bug in oc-exec; please report it.`;
