// The sandbox attack kit shared by the turn and server tests: a canary on loopback that is not the
// provider, planted secrets in the throwaway HOME, and readers for what a turn left behind.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import type { OcEvent } from "../../src/contract/schema.js";
import type { E2E } from "./e2e.js";

export type Canary = { port: number; connections: number; requests: string[]; reset(): void };

/** A canary HTTP server on loopback for the file: it counts every connection and request. */
export function useCanary(): Canary {
  let server: Server;
  const canary: Canary = {
    port: 0,
    connections: 0,
    requests: [],
    reset() {
      canary.connections = 0;
      canary.requests = [];
    },
  };
  beforeAll(async () => {
    server = createServer((req, res) => {
      canary.requests.push(req.url ?? "");
      res.end("canary");
    });
    server.on("connection", () => canary.connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    canary.port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  return canary;
}

export const secret = () => randomBytes(18).toString("hex");

/**
 * A throwaway HOME's planted secrets (an SSH key, AWS credentials) and a fresh workspace, and the
 * secret variables of the run, whose values must never show.
 */
export function plant(e2e: E2E, variables: string[] = ["GITHUB_TOKEN", "NPM_TOKEN", "OPENCODE_SERVER_PASSWORD"]) {
  const home = e2e.home.root;
  const ssh = secret();
  const aws = secret();
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_ed25519"), `-----BEGIN OPENSSH PRIVATE KEY-----\n${ssh}\n`);
  mkdirSync(join(home, ".aws"), { recursive: true });
  writeFileSync(join(home, ".aws", "credentials"), `[default]\naws_secret_access_key = ${aws}\n`);
  rmSync(join(home, ".bashrc"), { force: true });
  const workspace = e2e.workspace();
  const tokens = Object.fromEntries(variables.map((name) => [name, secret()]));
  return { workspace, secrets: [ssh, aws, ...Object.values(tokens)], tokens };
}

/** Where the escape scenario tries to write outside its workspace. */
export const outside = (e2e: E2E, workspace: string) => [
  join(dirname(workspace), "escape.txt"),
  join(e2e.home.root, ".bashrc"),
  `/tmp/oc-exec-escape-${basename(dirname(workspace))}-${basename(workspace)}.txt`,
];

/** Every file under a directory, as text (what the turn could have left a secret in). */
export function allText(dir: string): string {
  let text = "";
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    try {
      text += readFileSync(join(entry.parentPath, entry.name), "utf8");
    } catch {
      // Unreadable: not something the turn wrote for us to find.
    }
  }
  return text;
}

export function toolOutput(events: OcEvent[]): string {
  const tool = events.find((e) => e.type === "tool");
  return tool?.type === "tool" ? (tool.output ?? "") : "";
}

/** The warnings a turn's refused connections gave, as their messages. */
export const refusedWarnings = (events: OcEvent[]) =>
  events.flatMap((e) => (e.type === "warning" && e.code === "sandbox_refused" ? [e.message] : []));

/** Processes whose environment holds this HOME: every process of a run in it inherits it. */
export function processesWithHome(home: string): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/environ`, "utf8").split("\0").includes(`HOME=${home}`);
      } catch {
        return false;
      }
    });
}

/**
 * The prompt of the `attack` scenario: the scripted model runs `script` in one bash call, then
 * answers `answer` (or "Attack done."), in which `{leak}`, `{leak:reversed}` and `{leak:base64}`
 * stand for what the tool printed after `LEAK:`. A marker keeps each turn's requests apart.
 */
export function attackPrompt(script: string, answer?: string): { prompt: string; marker: string } {
  const marker = `attack-${secret().slice(0, 8)}`;
  const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
  return {
    marker,
    prompt: `scenario:attack ${marker} script=${b64(script)}${answer === undefined ? "" : ` answer=${b64(answer)}`}`,
  };
}

/**
 * What the `escape` scenario's agent reports when a workspace-write sandbox held (`output`: its
 * tool's output): every write outside thrown away or refused, the files that run code later kept,
 * the canary unreachable, no token, the sandbox's temporary directory gone; and nothing written
 * outside the workspace. Shared by `opencode run` and `--acp` under the sandbox.
 */
export function expectEscapeHeld(
  e2e: E2E,
  t: { run: { result: unknown }; output: string; workspace: string },
  canary: Canary,
): void {
  expect(t.run.result).toMatchObject({ class: "success", text: "Tried everything." });
  // The workspace's parent and HOME are the sandbox's own HOME (a tmpfs): made, and thrown away.
  expect(t.output).toContain("write ../escape.txt: thrown away");
  expect(t.output).toContain("write ~/.bashrc: thrown away");
  expect(t.output).toMatch(/write \/tmp\/oc-exec-escape-\S+: refused/);
  expect(t.output).toContain("write inside.txt: done");
  expect(t.output).toContain("write .vscode/tasks.json: refused");
  expect(t.output).toContain("write .gitmodules: refused");
  expect(t.output).toContain(`curl 127.0.0.1:${canary.port}: refused`);
  expect(t.output).toContain(`tcp 127.0.0.1:${canary.port}: refused`);
  expect(t.output).toContain(`dns canary.localhost:${canary.port}: refused`);
  expect(t.output).toContain("tokens: GITHUB_TOKEN=unset NPM_TOKEN=unset");
  expect(t.output).toContain("server password is unset");
  // Its own temporary directory, gone with the run (opencode leaves a 5.5 MB library there).
  const tmp = /^tmpdir: (\/tmp\/oc-exec-sandbox-[\w-]+)$/m.exec(t.output)?.[1];
  expect(tmp).toBeDefined();
  expect(existsSync(tmp!)).toBe(false);
  for (const path of outside(e2e, t.workspace)) expect(existsSync(path), path).toBe(false);
  expect(readFileSync(join(t.workspace, "inside.txt"), "utf8")).toBe("inside\n");
  expect(existsSync(join(t.workspace, ".vscode", "tasks.json"))).toBe(false);
}
