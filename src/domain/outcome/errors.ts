// Errors oc-exec raises on purpose. A ConfigError is the user's to fix (flags, files, workspace)
// and ends as class config_error; anything else that escapes is an internal error.
export class ConfigError extends Error {
  override readonly name: string;
  constructor(message: string, name = "ConfigError") {
    super(message);
    this.name = name;
  }
}
