// `npm run soak:server`: 200 turns on one managed server (oc-exec server start), text and tool
// turns alternating, each a separate oc-exec --attach process. Reports the server's RSS after the
// warm-up and at the end, its open file descriptors, and any process or descriptor left behind.
// Asserts nothing; prints figures (the machines here are shared and noisy).
//
//   npm run soak:server [-- --turns 200]
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { makeHermeticHome } from "../../src/scripted/hermetic-home.js";
import { startModelServer } from "../../src/scripted/model-server.js";
import { descendants, isAlive } from "../support/procs.js";

const { values } = parseArgs({
  options: { turns: { type: "string", default: "200" }, ephemeral: { type: "boolean", default: false } },
});
const TURNS = Number(values.turns);
const BIN = fileURLToPath(new URL("../../bin/oc-exec.js", import.meta.url));
const WARM_UP = 20;

const model = await startModelServer();
const home = makeHermeticHome(model.url, "oc-exec-soak-");
const env = { ...home.env, OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) };

function run(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env,
      cwd: home.workspace,
      stdio: ["ignore", "pipe", "ignore"],
    });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.on("close", (code) => resolve({ code, stdout }));
  });
}
const rss = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) * 1024;
const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const mb = (b: number) => (b / 1024 / 1024).toFixed(0);

const started = await run(["server", "start", "--idle-timeout", "0"]);
const url = started.stdout.trim();
const dir = join(home.env.XDG_STATE_HOME!, "oc-exec", "servers");
const record = JSON.parse(readFileSync(join(dir, readdirSync(dir).find((n) => n.endsWith(".json"))!), "utf8")) as {
  pid: number;
  supervisor_pid: number;
};
const codes = new Map<number, number>();
const checkpoints: string[] = [];
let afterWarmUp = { rss: 0, fds: 0, children: 0 };
const t0 = Date.now();
for (let i = 1; i <= TURNS; i++) {
  const tool = i % 2 === 0;
  const turn = await run([
    "-q",
    "--attach",
    url,
    ...(tool ? ["--auto", "scenario:tool run echo"] : ["scenario:plain hi"]),
  ]);
  codes.set(turn.code ?? -1, (codes.get(turn.code ?? -1) ?? 0) + 1);
  if (i === WARM_UP)
    afterWarmUp = { rss: rss(record.pid), fds: fds(record.pid), children: descendants(record.pid).length };
  if (i === WARM_UP || i % 50 === 0) checkpoints.push(`${i}: ${mb(rss(record.pid))}`);
}
const seconds = (Date.now() - t0) / 1000;
const end = { rss: rss(record.pid), fds: fds(record.pid), children: descendants(record.pid).length };
const leftTurns = descendants(process.pid).filter(
  (p) => p.cmdline.includes("oc-exec.js") && !p.cmdline.includes("supervise"),
);
await run(["server", "stop", url]);
const gone = !isAlive(record.pid) && !isAlive(record.supervisor_pid);
await model.close();
home.cleanup();
process.stdout.write(
  `${[
    `server soak: ${TURNS} turns (text and tool with a live permission answer alternating${values.ephemeral ? ", --ephemeral" : ""}) on one managed server, ${seconds.toFixed(0)} s, ${(seconds / TURNS).toFixed(2)} s per turn`,
    `  exit codes: ${[...codes].map(([c, n]) => `${c}×${n}`).join(", ")}`,
    `  server RSS after ${WARM_UP} turns ${mb(afterWarmUp.rss)} MB, after ${TURNS} ${mb(end.rss)} MB: growth ${(((end.rss - afterWarmUp.rss) / afterWarmUp.rss) * 100).toFixed(1)}%   (target < 10%)`,
    `  server RSS (MB) by turn: ${checkpoints.join(", ")}`,
    `  server fds ${afterWarmUp.fds} -> ${end.fds}; processes under the server ${afterWarmUp.children} -> ${end.children}; oc-exec turn processes left ${leftTurns.length}; server and supervisor gone after stop: ${gone}`,
  ].join("\n")}\n`,
);
