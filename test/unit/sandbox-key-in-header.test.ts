// The real key goes into the credential header only (src/hosts/sandbox/key-in-header.ts). The library's
// own registry swaps a stand-in wherever it is, bodies included (the hole, shown first); narrowed,
// it swaps the whole value of a credential header and nothing else. The last tests fail when a
// release of the library changes what the narrowing relies on.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { SandboxManager } from "@anthropic-ai/sandbox-runtime";
import {
  createBodySubstitutionTransform,
  prepareBodySubstitution,
} from "@anthropic-ai/sandbox-runtime/dist/sandbox/body-substitution.js";
import { SentinelRegistry } from "@anthropic-ai/sandbox-runtime/dist/sandbox/credential-sentinel.js";
import { describe, expect, it } from "vitest";
import { CREDENTIAL_HEADERS, keyInHeaderOnly } from "../../src/hosts/sandbox/key-in-header.js";

const HOST = "api.provider.test";
const REAL = "sk-real-0123456789abcdef";
const exact = (host: string, pattern: string) => host === pattern;

function registry() {
  const r = new SentinelRegistry();
  const standin = r.register("PROVIDER_KEY", REAL, [HOST]);
  return { r, standin };
}

/** Headers as the proxy forwards them, after the registry had its go. */
function swapped(r: SentinelRegistry, headers: Record<string, string>, host = HOST) {
  const copy: Record<string, string | string[] | undefined> = { ...headers };
  r.substituteInHeaders(copy, host, exact);
  return copy;
}

async function throughBody(r: SentinelRegistry, body: string): Promise<string> {
  const req = Object.assign(Readable.from([Buffer.from(body)]), {
    method: "POST",
    headers: { "content-length": String(body.length) },
  });
  const transform = prepareBodySubstitution(
    (host) => r.sentinelsForHost(host, exact),
    req as never,
    { "content-length": String(body.length) },
    HOST,
  );
  if (!transform) return body;
  const parts: Buffer[] = [];
  for await (const part of req.pipe(transform)) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

describe("the library's own swap (the hole)", () => {
  it("puts the real key into a body, any header, and the middle of a longer value", async () => {
    const { r, standin } = registry();
    expect(await throughBody(r, `{"model":"${standin}"}`)).toBe(`{"model":"${REAL}"}`);
    expect(swapped(r, { "x-echo": standin, authorization: `Bearer x${standin}y` })).toEqual({
      "x-echo": REAL,
      authorization: `Bearer x${REAL}y`,
    });
    // The transform the proxy builds from the same pairs.
    expect(createBodySubstitutionTransform(r.sentinelsForHost(HOST, exact))).toBeDefined();
  });
});

describe("narrowed to the credential header", () => {
  it("swaps the whole value of a credential header, bearer or bare, at the key's hosts only", () => {
    const { r, standin } = registry();
    const narrowed = keyInHeaderOnly(r);
    expect(narrowed).not.toHaveProperty("problem");
    expect(swapped(r, { authorization: `Bearer ${standin}` })).toEqual({ authorization: `Bearer ${REAL}` });
    expect(swapped(r, { authorization: `bearer ${standin}` })).toEqual({ authorization: `bearer ${REAL}` });
    for (const name of CREDENTIAL_HEADERS.filter((h) => h !== "authorization"))
      expect(swapped(r, { [name]: standin })).toEqual({ [name]: REAL });
    // Another host keeps the stand-in, as the library's own gate says.
    expect(swapped(r, { authorization: `Bearer ${standin}` }, "elsewhere.test")).toEqual({
      authorization: `Bearer ${standin}`,
    });
  });

  it.each([
    ["another header", (s: string) => ({ "x-echo": s })],
    ["a longer value", (s: string) => ({ authorization: `Bearer x${s}y` })],
    ["a second word", (s: string) => ({ authorization: `Bearer ${s} extra` })],
    ["another scheme", (s: string) => ({ authorization: `Basic ${s}` })],
    ["a query-like value", (s: string) => ({ "x-api-key": `key=${s}` })],
  ])("leaves the stand-in in %s", (_what, headers) => {
    const { r, standin } = registry();
    keyInHeaderOnly(r);
    expect(swapped(r, headers(standin))).toEqual(headers(standin));
  });

  it("never rewrites a body: the proxy keeps it byte for byte", async () => {
    const { r, standin } = registry();
    keyInHeaderOnly(r);
    expect(r.sentinelsForHost(HOST, exact)).toEqual([]);
    expect(await throughBody(r, `{"model":"${standin}"}`)).toBe(`{"model":"${standin}"}`);
  });

  it("is undone by restore: the library's own methods again", async () => {
    const { r, standin } = registry();
    const narrowed = keyInHeaderOnly(r);
    if ("problem" in narrowed) throw new Error(narrowed.problem);
    narrowed.restore();
    expect(Object.keys(r)).not.toContain("substituteInHeaders");
    expect(await throughBody(r, standin)).toBe(REAL);
  });

  it("refuses a registry of another shape (the sandbox then fails closed)", () => {
    expect(keyInHeaderOnly({ substituteInHeaders() {} })).toEqual({
      problem: expect.stringContaining("sentinelsForHost, lookupReal"),
    });
    expect(keyInHeaderOnly(null)).toHaveProperty("problem");
  });
});

describe("what the narrowing relies on in the library (fails when a release changes it)", () => {
  const dist = join(dirname(createRequire(import.meta.url).resolve("@anthropic-ai/sandbox-runtime")), "sandbox");
  const source = (file: string) => readFileSync(join(dist, file), "utf8");

  it("the version it was written against", () => {
    const pkg = JSON.parse(readFileSync(join(dist, "..", "..", "package.json"), "utf8")) as { version: string };
    expect(pkg.version).toBe("0.0.78");
  });

  it("the manager's one registry, whose methods its proxy looks up at every request", () => {
    const manager = SandboxManager.getSentinelRegistry();
    expect(manager).toBeInstanceOf(SentinelRegistry);
    const narrowed = keyInHeaderOnly(manager);
    expect(narrowed).not.toHaveProperty("problem");
    // Undone at once: this test process opens no sandbox.
    if ("restore" in narrowed) narrowed.restore();
    const code = source("sandbox-manager.js");
    expect(code).toContain(
      "return (headers, destHost) => {\n        sentinelRegistry.substituteInHeaders(headers, destHost, matchesDomainPattern);",
    );
    expect(code).toContain("return destHost => sentinelRegistry.sentinelsForHost(destHost, matchesDomainPattern);");
  });

  it("no other path of the library handles a real value: only the registry and the body transform", () => {
    const files = readdirSync(dist).filter((f) => f.endsWith(".js") && source(f).includes("realValue"));
    expect(files.sort()).toEqual(["body-substitution.js", "credential-sentinel.js"]);
    const calls = readdirSync(dist)
      .filter((f) => f.endsWith(".js"))
      .flatMap((f) => [...source(f).matchAll(/sentinelRegistry\.(\w+)\(/g)].map((m) => `${f}:${m[1]}`));
    expect(calls.sort()).toEqual([
      "sandbox-manager.js:clear",
      "sandbox-manager.js:namesInjectableAt",
      "sandbox-manager.js:sentinelsForHost",
      "sandbox-manager.js:substituteInHeaders",
    ]);
  });
});
