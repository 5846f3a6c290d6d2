// opencode's errors, as they become known: an UnknownError names a `ref` whose real cause opencode
// logs on stderr, maybe a little later, so it waits here for that cause; 1.0 dumps a thrown error
// on stderr over several lines; and an error a later step answered past was recovered from. Pure:
// each method returns the errors that are now complete, in order; the normalizer records them.

import type { Json } from "./upstream.js";
import { applyCause, parseUpstreamError, type UpstreamError } from "./upstream-error.js";

export class ErrorLedger {
  /** The step each error arrived in, to tell a recovered error from a final one. */
  private readonly stepOf = new Map<UpstreamError, number>();
  private readonly waiting: UpstreamError[] = [];
  private readonly causes = new Map<string, string>();
  // 1.0 dumps a thrown error on stderr: a `Name: Name` header, then `  providerID: "x",` lines.
  private dump: { name: string; fields: Record<string, string> } | null = null;

  /** An error event from the stream, in step `step`: complete now, or waiting for its cause. */
  upstream(event: Json, step: number): UpstreamError | null {
    const error = parseUpstreamError(event);
    this.stepOf.set(error, step);
    if (error.name === "UnknownError" && error.ref !== null) {
      const cause = this.causes.get(error.ref);
      if (!cause) {
        this.waiting.push(error);
        return null;
      }
      applyCause(error, cause);
    }
    return error;
  }

  /** The cause opencode logged for a ref: the error that waited for it, if one did. */
  cause(ref: string, cause: string): UpstreamError | null {
    this.causes.set(ref, cause);
    const at = this.waiting.findIndex((e) => e.ref === ref);
    if (at === -1) return null;
    const [error] = this.waiting.splice(at, 1);
    applyCause(error!, cause);
    return error!;
  }

  /** A line of 1.0's stderr error dump: the error once the dump names a model that was not found. */
  dumpLine(text: string): UpstreamError | null {
    const header = /^([A-Z][A-Za-z]*Error): \1$/.exec(text.trim());
    if (header) {
      this.dump = { name: header[1]!, fields: {} };
      return null;
    }
    const field = /^\s*(providerID|modelID):\s*"(.*)",?$/.exec(text);
    if (!this.dump || !field) return null;
    this.dump.fields[field[1]!] = field[2]!;
    const { providerID, modelID } = this.dump.fields;
    if (this.dump.name !== "ProviderModelNotFoundError" || !providerID || !modelID) return null;
    const error: UpstreamError = {
      class: "config_error",
      name: "UnknownError",
      message: "",
      statusCode: null,
      retryable: null,
      ref: null,
    };
    applyCause(error, `ProviderModelNotFoundError: Model not found: ${providerID}/${modelID}.`);
    this.dump = null;
    return error;
  }

  /** Errors followed by a step that answered (after step `answeredIn`'s text) were retried past. */
  recovered(errors: UpstreamError[], answeredIn: number): UpstreamError[] {
    return errors.filter((e) => answeredIn > (this.stepOf.get(e) ?? 0));
  }

  /** Both streams ended: the errors whose cause never came, as they are. */
  flush(): UpstreamError[] {
    return this.waiting.splice(0);
  }
}
