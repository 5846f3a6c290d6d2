// Records real `opencode run --format json` output as fixtures: for each standard scenario, run an
// opencode binary against the scripted model server in a throwaway HOME and save stdout, stderr,
// exit status and the opencode version under test/fixtures/opencode-<version>/<scenario>/.
//
//   npx tsx scripts/record-fixtures.ts [--opencode PATH] [--only a,b] [--slow]
//
// --slow adds the scenarios opencode retries for over a minute (HTTP 500, connection refused).
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { Features } from "../src/domain/opencode/features.js";
import { buildArgs } from "../src/domain/opencode/invocation.js";
import { bundledBinary } from "../src/domain/opencode/locate.js";
import { detectOpencode } from "../src/domain/opencode/version.js";
import { makeHermeticHome, providerConfig } from "../src/domain/scripted/hermetic-home.js";
import { startModelServer } from "../src/domain/scripted/model-server.js";
import { closedPort, SCENARIOS, type Scenario } from "../test/support/scenarios.js";
import { testReply } from "../test/support/test-scripts.js";

async function record(
  binary: string,
  version: string,
  features: Features,
  name: string,
  scenario: Scenario,
  outRoot: string,
): Promise<void> {
  const server = await startModelServer(scenario.script ?? testReply);
  const home = makeHermeticHome(server.url);
  try {
    for (const [file, content] of Object.entries(scenario.workspaceFiles ?? {}))
      writeFileSync(join(home.workspace, file), content);
    const env = { ...home.env, ...scenario.env?.(server.url) };
    if (name === "connection-refused")
      env.OPENCODE_CONFIG_CONTENT = providerConfig(`http://127.0.0.1:${await closedPort()}/v1`);
    const args = buildArgs({
      workspace: home.workspace,
      prompt: scenario.prompt,
      title: "fixture",
      model: scenario.args?.model ?? null,
      agent: scenario.args?.agent ?? null,
      variant: null,
      thinking: false,
      session: scenario.args?.session ?? null,
      files: [],
      pure: false,
      features,
    });
    const started = Date.now();
    const child = spawn(binary, args, { env, cwd: home.workspace, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.stdin.end(scenario.prompt);
    // Some releases never exit in some scenarios; that is worth recording too.
    const limit = setTimeout(
      () => child.kill("SIGKILL"),
      Number(process.env.RECORD_LIMIT_MS ?? (scenario.slow ? 150_000 : 60_000)),
    );
    const [code, signal] = await new Promise<[number | null, string | null]>((r) =>
      child.on("close", (c, s) => r([c, s])),
    );
    clearTimeout(limit);
    const dir = join(outRoot, `opencode-${version}`, name);
    mkdirSync(dir, { recursive: true });
    // Paths and ports differ per run; keep them recognizable but stable for diffs.
    const scrub = (b: Buffer) =>
      b
        .toString("utf8")
        .split(home.root)
        .join("/tmp/oc-exec-fixture")
        .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:PORT");
    writeFileSync(join(dir, "stdout.txt"), scrub(Buffer.concat(out)));
    writeFileSync(join(dir, "stderr.txt"), scrub(Buffer.concat(err)));
    const meta = {
      opencode_version: version,
      scenario: name,
      exit_code: code,
      signal,
      args: args.map((a) => a.split(home.root).join("/tmp/oc-exec-fixture")),
      env: Object.keys(scenario.env?.(server.url) ?? {}),
      duration_ms: Date.now() - started,
      recorded_with: "scripts/record-fixtures.ts",
    };
    writeFileSync(join(dir, "meta.json"), `${JSON.stringify(meta, null, 2)}\n`);
    process.stderr.write(`${version} ${name}: exit ${code}${signal ? ` (${signal})` : ""}, ${meta.duration_ms} ms\n`);
  } finally {
    await server.close();
    home.cleanup();
  }
}

const { values } = parseArgs({
  options: {
    opencode: { type: "string" },
    only: { type: "string" },
    slow: { type: "boolean" },
    out: { type: "string" },
  },
});
const binary = values.opencode ? resolve(values.opencode) : bundledBinary()?.path;
if (!binary) throw new Error("no opencode binary: pass --opencode PATH");
const detected = await detectOpencode(
  { path: binary, source: "explicit", packageVersion: null },
  { ...process.env, XDG_CACHE_HOME: "/nonexistent-cache" },
);
const version = detected.version ?? "unknown";
const outRoot = values.out ?? fileURLToPath(new URL("../test/fixtures", import.meta.url));
const only = values.only?.split(",");
const chosen = Object.entries(SCENARIOS).filter(([name, s]) => (only ? only.includes(name) : !s.slow || values.slow));
for (const [name, s] of chosen) await record(binary, version, detected.features, name, s, outRoot);
