// `npm run compat`: the compatibility matrix. Installs each tested opencode release into
// .cache/opencode/<version> (not into the project's dependencies), then runs the built oc-exec
// with that real binary against the scripted model server for every standard scenario and checks
// the class and exit code oc-exec reports. Prints a markdown table: version by scenario.
//
//   npm run compat [-- --versions 1.0.185,1.14.41,1.18.33] [--scenarios plain,tool] [--timeout 90s]
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { EXIT_CODES, type OutcomeClass } from "../src/contract/exit-codes.js";
import { TESTED_VERSIONS } from "../src/domain/opencode/features.js";
import { makeHermeticHome, providerConfig } from "../src/domain/scripted/hermetic-home.js";
import { startModelServer } from "../src/domain/scripted/model-server.js";
import { parseLines } from "../test/support/run-cli.js";
import { closedPort, SCENARIOS } from "../test/support/scenarios.js";
import { testReply } from "../test/support/test-scripts.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const { values } = parseArgs({
  options: { versions: { type: "string" }, scenarios: { type: "string" }, timeout: { type: "string", default: "90s" } },
});
const versions = values.versions?.split(",") ?? [...TESTED_VERSIONS];
const names = values.scenarios?.split(",") ?? Object.keys(SCENARIOS).filter((n) => !SCENARIOS[n]!.slow);

function installed(version: string): string {
  const dir = join(root, ".cache", "opencode", version);
  const binary = join(dir, "node_modules", `opencode-${process.platform}-${process.arch}`, "bin", "opencode");
  if (!existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `opencode-${version}`, private: true }));
    process.stderr.write(`compat: installing opencode-ai@${version} into ${dir}\n`);
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", `opencode-ai@${version}`], {
      cwd: dir,
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  return binary;
}

type Cell = { ok: boolean; text: string };

async function runScenario(binary: string, name: string): Promise<Cell> {
  const scenario = SCENARIOS[name]!;
  const server = await startModelServer(scenario.script ?? testReply);
  const home = makeHermeticHome(server.url);
  try {
    for (const [file, content] of Object.entries(scenario.workspaceFiles ?? {}))
      writeFileSync(join(home.workspace, file), content);
    const env: Record<string, string> = { ...home.env, ...scenario.env?.(server.url), OC_EXEC_OPENCODE: binary };
    if (name === "connection-refused")
      env.OPENCODE_CONFIG_CONTENT = providerConfig(`http://127.0.0.1:${await closedPort()}/v1`);
    const args = ["-q", "--timeout", values.timeout!, "--dir", home.workspace];
    if (scenario.args?.model) args.push("-m", scenario.args.model);
    if (scenario.args?.session) args.push("--session", scenario.args.session);
    if (scenario.args?.agent) args.push("--agent", scenario.args.agent);
    const child = spawn(process.execPath, [join(root, "bin", "oc-exec.js"), ...args, "-"], {
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stdin.end(scenario.prompt);
    const code = await new Promise<number | null>((r) => child.on("close", r));
    const result = parseLines(stdout).at(-1);
    if (result?.type !== "result") return { ok: false, text: `no result line (exit ${code})` };
    const want = scenario.expect as OutcomeClass;
    const ok = result.class === want && code === EXIT_CODES[want];
    const why = result.error ? `: ${result.error.message.split("\n")[0]!.slice(0, 80)}` : "";
    return { ok, text: ok ? `pass (${result.class})` : `FAIL: ${result.class} (exit ${code}), expected ${want}${why}` };
  } finally {
    await server.close();
    home.cleanup();
  }
}

const rows: string[][] = [];
for (const version of versions) {
  const binary = installed(version);
  for (const name of names) {
    const cell = await runScenario(binary, name);
    process.stderr.write(`compat: opencode ${version} ${name}: ${cell.text}\n`);
    let row = rows.find((r) => r[0] === name);
    if (!row) {
      row = [name];
      rows.push(row);
    }
    row.push(cell.text.replace(/\|/g, "\\|"));
  }
}
const table = [
  `| scenario | ${versions.map((v) => `opencode ${v}`).join(" | ")} |`,
  `|---|${versions.map(() => "---").join("|")}|`,
  ...rows.map((r) => `| ${r.join(" | ")} |`),
].join("\n");
mkdirSync(join(root, ".cache"), { recursive: true });
writeFileSync(join(root, ".cache", "compat.md"), `${table}\n`);
process.stdout.write(`${table}\n`);
