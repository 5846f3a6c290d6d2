// Records real opencode server event streams as fixtures: starts `oc-exec server start` (the
// bundled opencode, the scripted model server, a throwaway HOME), runs each scenario with
// `--attach` and OC_EXEC_RECORD_EVENTS, and saves the session's raw events with what the live run
// reported under test/fixtures/server-<version>/<scenario>/ (events.jsonl, meta.json).
//
//   npx tsx scripts/record-server-fixtures.ts
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { makeHermeticHome } from "../src/domain/scripted/hermetic-home.js";
import { startModelServer } from "../src/domain/scripted/model-server.js";
import { testReply } from "../test/support/test-scripts.js";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const BIN = join(ROOT, "bin", "oc-exec.js");

/** Scenario name -> the oc-exec arguments and environment of its turn. */
const SCENARIOS: Record<string, { args: string[]; env?: Record<string, string> }> = {
  plain: { args: ["scenario:plain say hello"] },
  "text-deltas": { args: ["--text-deltas", "scenario:plain say hello"] },
  tool: { args: ["--auto", "scenario:tool run echo"] },
  write: { args: ["scenario:write a note"] },
  "permission-ask": { args: ["scenario:tool run echo"], env: { OPENCODE_PERMISSION: '{"bash":"ask"}' } },
  "external-directory": { args: ["scenario:read-outside read /etc/hostname"] },
  question: { args: ["--allow", "question,read", "scenario:question pick"] },
  "api-401": { args: ["scenario:http-401"] },
  "api-429": { args: ["scenario:http-429"] },
  "context-overflow": { args: ["scenario:context-overflow"] },
  length: { args: ["scenario:length"] },
  "unknown-model": { args: ["-m", "fake/nope", "scenario:plain"] },
};

const server = await startModelServer(testReply);
const home = makeHermeticHome(server.url, "oc-exec-server-fixture-");
// Asynchronous: the scripted model server answers from this very process.
const run = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...home.env, ...env }, cwd: home.workspace });
    child.stdin.end();
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (status) => done({ status, stdout, stderr }));
  });
const started = await run(["server", "start", "--idle-timeout", "0"]);
const url = started.stdout.trim();
if (started.status !== 0) throw new Error(`server start failed: ${started.stderr}`);
try {
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    const file = join(home.root, `${name}.jsonl`);
    const out = await run(["-q", "--attach", url, ...scenario.args], { ...scenario.env, OC_EXEC_RECORD_EVENTS: file });
    const events = out.stdout
      .trim()
      .split("\n")
      .map(
        (l) => JSON.parse(l) as { type: string; opencode?: { version: string }; class?: string; session_id: string },
      );
    const result = events.at(-1)!;
    const version = events[0]!.opencode!.version;
    const dir = join(ROOT, "test", "fixtures", `server-${version}`, name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "events.jsonl"), readFileSync(file, "utf8").replaceAll(home.root, "/tmp/oc-exec-fixture"));
    const meta = {
      opencode_version: version,
      backend: "server",
      scenario: name,
      args: scenario.args,
      env: Object.keys(scenario.env ?? {}),
      session_id: result.session_id,
      live: { exit_code: out.status, class: result.class, types: events.map((e) => e.type) },
      recorded_with: "scripts/record-server-fixtures.ts",
    };
    writeFileSync(join(dir, "meta.json"), `${JSON.stringify(meta, null, 2)}\n`);
    console.error(`${name}: ${result.class} (${out.status}), ${meta.live.types.length} events`);
  }
} finally {
  await run(["server", "stop", url]);
  await server.close();
  home.cleanup();
}
