// The real key goes into the credential header of a request to its provider, and nowhere else.
//
// The sandbox library (0.0.78) swaps a masked key's stand-in for the real key wherever it finds it
// in a request to the key's hosts: in every header (SentinelRegistry.substituteInHeaders scans them
// all) and in the body (SentinelRegistry.sentinelsForHost feeds a byte-scanning transform). So a
// tool that sends the stand-in as a model name gets the real key back in the provider's
// `model_not_found` error, and a tool that prints the stand-in has it sent to the model as the real
// key in the next request's body. No setting of the library narrows where it swaps: its proxy asks
// its one registry (SandboxManager.getSentinelRegistry()) at every request, so these two methods
// are replaced on that instance while a sandbox is open. A header gets the real key only when it is
// a credential header and its whole value is a stand-in (or `Bearer ` and one): a stand-in inside
// a longer value (which a provider could quote back in part) stays a stand-in. A query parameter
// (`?key=`) is never swapped, as the library never did; Google's SDK sends `x-goog-api-key`.
// test/unit/sandbox-key-in-header.test.ts fails if a library release changes what this relies on.

/** The headers providers read a key from: OpenAI-style bearer, Anthropic, Google, Azure. */
export const CREDENTIAL_HEADERS = ["authorization", "x-api-key", "x-goog-api-key", "api-key"] as const;

type Headers = Record<string, string | string[] | undefined>;
type HostMatcher = (host: string, pattern: string) => boolean;

/** The parts of the library's SentinelRegistry this relies on (its methods, on its prototype). */
type Registry = {
  substituteInHeaders(headers: Headers, destHost: string, matches: HostMatcher): void;
  sentinelsForHost(destHost: string, matches: HostMatcher): unknown[];
  lookupReal(sentinel: string): string | undefined;
};

const METHODS = ["substituteInHeaders", "sentinelsForHost", "lookupReal"] as const;

/** `Bearer ` (kept as written) and the one token a credential header carries, or null. */
const TOKEN = /^((?:bearer[ \t]+)?)([^\s]+)$/i;

/**
 * Narrows the library's registry to credential headers, whole values. Returns the way to undo it,
 * or a problem when the registry is not what this was written against (the sandbox then fails
 * closed rather than swap keys into bodies).
 */
export function keyInHeaderOnly(registry: unknown): { restore(): void } | { problem: string } {
  const proto = registry && typeof registry === "object" ? Object.getPrototypeOf(registry) : null;
  const missing = METHODS.filter((m) => typeof proto?.[m] !== "function");
  if (missing.length > 0)
    return {
      problem: `the sandbox library's credential registry has changed (${missing.join(", ")}): oc-exec cannot keep the provider's key out of request bodies with it`,
    };
  const r = registry as Registry;
  const substitute = proto.substituteInHeaders as Registry["substituteInHeaders"];
  Object.assign(r, {
    substituteInHeaders(headers: Headers, destHost: string, matches: HostMatcher) {
      for (const name of CREDENTIAL_HEADERS) {
        const value = headers[name];
        // A header sent twice is not what a provider's SDK sends: it keeps its stand-ins.
        if (typeof value !== "string") continue;
        const m = TOKEN.exec(value);
        if (!m || r.lookupReal(m[2]!) === undefined) continue;
        // The library's own method on this one header: it swaps only where the key may go.
        const one: Headers = { [name]: m[2]! };
        substitute.call(r, one, destHost, matches);
        headers[name] = `${m[1]}${one[name] as string}`;
      }
    },
    // No body is ever rewritten: the library keeps a request's body byte for byte when this is empty.
    sentinelsForHost: () => [],
  });
  return {
    restore() {
      for (const m of ["substituteInHeaders", "sentinelsForHost"]) delete (r as Record<string, unknown>)[m];
    },
  };
}
