// The CA the sandbox's proxy terminates TLS with (credential masking over HTTPS), and the leaf
// certificates it signs, kept in oc-exec's own state directory, which no sandbox can read: the
// keys never enter one. The library would make a CA per run and leave it readable in /tmp, and it
// mints a leaf per run for each provider host, on the first model call's path; an RSA-2048 key
// takes 80-340 ms to make here. Both are made once instead: the CA when missing or near its end,
// a leaf when the library first mints it (kept when the sandbox closes) and handed back to the
// library's cache at the next sandbox while it is still good for the CA and the host.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";
import { ocExecStateDir } from "../../kernel/state-dir.js";
import { writeFileSafely } from "../../sys/safe-write.js";

type Library = typeof import("@anthropic-ai/sandbox-runtime");
/** The library's CA in use (SandboxManager.getMitmCA()); its leafCerts are what it mints with. */
export type ProxyCa = NonNullable<ReturnType<Library["SandboxManager"]["getMitmCA"]>>;
type Leaf = { certPem: string; keyPem: string };

const DAY_MS = 86_400_000;

const caDir = (env: NodeJS.ProcessEnv) => join(ocExecStateDir(env), "sandbox-ca");

/** The CA's files, made now when missing, broken or within a day of their end. */
export async function sandboxCa(env: NodeJS.ProcessEnv): Promise<{ certPath: string; keyPath: string }> {
  const { generateCa, validateCaPair } = (await import("@anthropic-ai/sandbox-runtime")) as Library;
  const dir = caDir(env);
  const certPath = join(dir, "ca.crt");
  const keyPath = join(dir, "ca.key");
  try {
    const valid = validateCaPair(readFileSync(certPath, "utf8"), readFileSync(keyPath, "utf8"));
    if (valid.ok && valid.notAfter.getTime() > Date.now() + DAY_MS) return { certPath, keyPath };
  } catch {
    // Missing or unreadable: made below.
  }
  const made = generateCa({ cn: "oc-exec sandbox CA" });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Whole files (concurrent runs never read half a one), and never through a link (sys/safe-write.ts).
  const failed =
    writeFileSafely(keyPath, made.keyPem, { mode: 0o600 }) ?? writeFileSafely(certPath, made.certPem, { mode: 0o644 });
  if (failed) throw new Error(`the sandbox CA could not be kept in ${dir}: ${failed.problem}`);
  return { certPath, keyPath };
}

const leafPath = (env: NodeJS.ProcessEnv, host: string) =>
  join(caDir(env), `leaf-${host.toLowerCase().replace(/[^a-z0-9.-]/g, "_")}.json`);

/**
 * Whether a kept leaf can serve host now: issued and signed by this CA (a CA made again orphans
 * the leaves of the old one), its chain ending with this CA, for this host, its key its own, and
 * more than a day left.
 */
export function leafFits(leaf: Leaf, caCertPem: string, host: string, now = Date.now()): boolean {
  try {
    const cert = new X509Certificate(leaf.certPem);
    const ca = new X509Certificate(caCertPem);
    const named = isIP(host) ? cert.checkIP(host) : cert.checkHost(host, { wildcards: false });
    return (
      leaf.certPem.trimEnd().endsWith(caCertPem.trimEnd()) &&
      cert.checkIssued(ca) &&
      cert.verify(ca.publicKey) &&
      named !== undefined &&
      cert.checkPrivateKey(createPrivateKey(leaf.keyPem)) &&
      Date.parse(cert.validTo) > now + DAY_MS
    );
  } catch {
    return false;
  }
}

/** Puts the kept leaves that still fit into the library's cache; returns the hosts it served. */
export function seedLeaves(env: NodeJS.ProcessEnv, ca: ProxyCa, hosts: readonly string[]): string[] {
  const seeded: string[] = [];
  for (const host of hosts) {
    try {
      const leaf = JSON.parse(readFileSync(leafPath(env, host), "utf8")) as Leaf;
      if (typeof leaf.certPem !== "string" || typeof leaf.keyPem !== "string") continue;
      if (!leafFits(leaf, ca.certPem, host)) continue;
      ca.leafCerts.set(host, { certPem: leaf.certPem, keyPem: leaf.keyPem });
      seeded.push(host);
    } catch {
      // None kept, or unreadable: the library mints one when it needs it.
    }
  }
  return seeded;
}

/** Keeps the leaves the library minted during this sandbox, for the hosts not served from disk. */
export function keepLeaves(env: NodeJS.ProcessEnv, ca: ProxyCa, hosts: readonly string[], seeded: string[]): void {
  for (const host of hosts) {
    const leaf = ca.leafCerts.get(host);
    if (!leaf || seeded.includes(host)) continue;
    // Not kept (a read-only state directory): the next sandbox mints its own.
    writeFileSafely(leafPath(env, host), JSON.stringify({ certPem: leaf.certPem, keyPem: leaf.keyPem }), {
      mode: 0o600,
    });
  }
}
