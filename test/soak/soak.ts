// `npm run soak`: 200 turns back to back through the library API against the scripted model
// server (real opencode), in one process, then a report: leaked processes and file descriptors
// (both must be zero) and RSS growth. Not part of `npm test`.
//
//   npm run soak -- [--turns N]
import { readdirSync } from "node:fs";
import { parseArgs } from "node:util";
import { runTurn } from "../../src/app/run-turn.js";
import { makeHermeticHome } from "../../src/domain/scripted/hermetic-home.js";
import { startModelServer } from "../../src/domain/scripted/model-server.js";
import { descendants } from "../support/procs.js";
import { testReply } from "../support/test-scripts.js";

const { values } = parseArgs({ options: { turns: { type: "string", default: "200" } } });
const turns = Number(values.turns);
const server = await startModelServer(testReply);
const home = makeHermeticHome(server.url);
const fds = () => readdirSync("/proc/self/fd").length;
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const scenarios = ["scenario:plain hi", "scenario:tool run echo", "scenario:write a note", "scenario:http-401"];

// One warm-up turn, so lazily loaded modules and caches do not count as growth.
for await (const _ of runTurn({ prompt: scenarios[0]!, dir: home.workspace, env: home.env })) void _;
global.gc?.();
const fdsBefore = fds();
// tsx keeps an esbuild service running: what exists before the turns is not a leak.
const before = new Set(descendants(process.pid).map((p) => p.pid));
const rssBefore = process.memoryUsage().rss;
const heapBefore = process.memoryUsage().heapUsed;
const classes = new Map<string, number>();
const started = Date.now();
for (let i = 0; i < turns; i++) {
  let cls = "none";
  for await (const event of runTurn({ prompt: scenarios[i % scenarios.length]!, dir: home.workspace, env: home.env })) {
    if (event.type === "result") cls = event.class;
  }
  classes.set(cls, (classes.get(cls) ?? 0) + 1);
  if ((i + 1) % 20 === 0)
    process.stderr.write(`soak: ${i + 1}/${turns} turns, rss ${mb(process.memoryUsage().rss)}, fds ${fds()}\n`);
}
global.gc?.();
await new Promise((r) => setTimeout(r, 500));
const leakedProcesses = descendants(process.pid).filter((p) => !before.has(p.pid));
const leakedFds = fds() - fdsBefore;
const rssAfter = process.memoryUsage().rss;
const heapAfter = process.memoryUsage().heapUsed;
await server.close();
home.cleanup();
const report = {
  turns,
  seconds: Math.round((Date.now() - started) / 1000),
  classes: Object.fromEntries(classes),
  leaked_processes: leakedProcesses.length,
  leaked_process_list: leakedProcesses.map((p) => `${p.pid} ${p.cmdline}`),
  leaked_fds: leakedFds,
  rss_before: mb(rssBefore),
  rss_after: mb(rssAfter),
  rss_growth: mb(rssAfter - rssBefore),
  // After a full GC: what the turns really kept alive (RSS keeps pages V8 has not returned).
  heap_before: mb(heapBefore),
  heap_after: mb(heapAfter),
  heap_growth: mb(heapAfter - heapBefore),
};
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
process.exitCode = leakedProcesses.length === 0 && leakedFds <= 0 ? 0 : 1;
