// The scripted model server as an HTTPS provider whose key is read from a variable: a TLS front
// with a self-signed certificate for 127.0.0.1 (made by openssl), for the credential-masking test
// and bench (the sandbox's proxy must terminate TLS to put the real key in).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** A TLS front for the scripted model server, with a self-signed certificate for 127.0.0.1. */
export async function tlsFront(upstream: string, root: string): Promise<{ url: string; ca: string; close(): void }> {
  const dir = mkdtempSync(join(root, "tls-"));
  const [key, cert] = [join(dir, "key.pem"), join(dir, "cert.pem")];
  // biome-ignore format: the openssl command line reads best on one line
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { stdio: "ignore" });
  const up = new URL(upstream);
  const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const forward = httpRequest(
      { host: up.hostname, port: up.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `https://127.0.0.1:${port}${up.pathname}`, ca: cert, close: () => server.close() };
}

/** The scripted provider at baseURL, its key read from OC_TEST_PROVIDER_KEY. */
export const keyedProvider = (baseURL: string) =>
  JSON.stringify({
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL, apiKey: "{env:OC_TEST_PROVIDER_KEY}" },
        models: { "fake-model": { name: "Scripted" } },
      },
    },
    model: "fake/fake-model",
  });
