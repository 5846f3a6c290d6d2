// The proxy's leaf certificates kept between sandboxes (src/hosts/sandbox/proxy-ca.ts): a leaf the
// library minted is kept when the sandbox closes and handed back to the library's cache at the
// next one, which then serves it instead of making a key; a leaf that no longer fits (another CA,
// another host, a key not its own, its end near) is not.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMitmCA, disposeMitmCA, type MitmCA } from "@anthropic-ai/sandbox-runtime/dist/sandbox/mitm-ca.js";
import { mintLeafCert } from "@anthropic-ai/sandbox-runtime/dist/sandbox/mitm-leaf.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepLeaves, leafFits, sandboxCa, seedLeaves } from "../../src/hosts/sandbox/proxy-ca.js";

const root = mkdtempSync(join(tmpdir(), "oc-exec-proxy-ca-test-"));
const env = { HOME: root, XDG_STATE_HOME: join(root, "state") };
const cas: MitmCA[] = [];
/** The library's CA object for the kept CA files, as SandboxManager makes it (an empty cache). */
const libraryCa = async () => {
  const files = await sandboxCa(env);
  const ca = createMitmCA({ caCertPath: files.certPath, caKeyPath: files.keyPath });
  cas.push(ca);
  return ca;
};
let other: MitmCA;
beforeAll(async () => {
  const otherEnv = { HOME: root, XDG_STATE_HOME: join(root, "other-state") };
  const files = await sandboxCa(otherEnv);
  other = createMitmCA({ caCertPath: files.certPath, caKeyPath: files.keyPath });
  cas.push(other);
});
afterAll(async () => {
  for (const ca of cas) await disposeMitmCA(ca);
  rmSync(root, { recursive: true, force: true });
});

describe("a kept leaf", () => {
  it("fits its own CA and host, with more than a day left, and nothing else", async () => {
    const ca = await libraryCa();
    const leaf = mintLeafCert(ca, "api.example.com");
    expect(leafFits(leaf, ca.certPem, "api.example.com")).toBe(true);
    expect(leafFits(leaf, ca.certPem, "other.example.com")).toBe(false);
    expect(leafFits(leaf, other.certPem, "api.example.com")).toBe(false);
    expect(leafFits(leaf, ca.certPem, "api.example.com", Date.now() + 99 * 86_400_000)).toBe(false);
    const ip = mintLeafCert(ca, "127.0.0.1");
    expect(leafFits(ip, ca.certPem, "127.0.0.1")).toBe(true);
    expect(leafFits(ip, ca.certPem, "127.0.0.2")).toBe(false);
    // A key not its own, or a chain that is not this CA's.
    expect(leafFits({ certPem: leaf.certPem, keyPem: ip.keyPem }, ca.certPem, "api.example.com")).toBe(false);
    expect(
      leafFits(
        { certPem: mintLeafCert(other, "api.example.com").certPem, keyPem: leaf.keyPem },
        ca.certPem,
        "api.example.com",
      ),
    ).toBe(false);
    expect(leafFits({ certPem: "garbage", keyPem: "garbage" }, ca.certPem, "api.example.com")).toBe(false);
  });

  it("is kept at close (mode 600), served to the next sandbox's library, and only while it fits", async () => {
    const hosts = ["api.example.com", "127.0.0.1"];
    const first = await libraryCa();
    expect(seedLeaves(env, first, hosts)).toEqual([]);
    const minted = mintLeafCert(first, "api.example.com");
    keepLeaves(env, first, hosts, []);
    const file = join(env.XDG_STATE_HOME, "oc-exec", "sandbox-ca", "leaf-api.example.com.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Only what the library minted is kept: no leaf for a host it never served.
    expect(() => statSync(join(env.XDG_STATE_HOME, "oc-exec", "sandbox-ca", "leaf-127.0.0.1.json"))).toThrow();

    const second = await libraryCa();
    expect(seedLeaves(env, second, hosts)).toEqual(["api.example.com"]);
    // The library's minting returns the kept leaf: no key is made.
    expect(mintLeafCert(second, "api.example.com")).toEqual(minted);
    const kept = statSync(file).mtimeMs;
    keepLeaves(env, second, hosts, ["api.example.com"]);
    expect(statSync(file).mtimeMs).toBe(kept);

    // A leaf written for another CA (the CA made again) or a broken file is not served.
    writeFileSync(file, JSON.stringify(mintLeafCert(other, "api.example.com")));
    expect(seedLeaves(env, await libraryCa(), hosts)).toEqual([]);
    writeFileSync(file, "{not json");
    expect(seedLeaves(env, await libraryCa(), hosts)).toEqual([]);
    expect(readFileSync(file, "utf8")).toBe("{not json");
  });
});
