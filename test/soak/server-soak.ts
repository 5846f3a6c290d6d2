// `npm run soak:server`: 200 turns on one managed server (oc-exec server start), text and tool
// turns alternating, each a separate oc-exec --attach process. Reports the server's RSS growth,
// its open file descriptors, and any process or descriptor left behind. Asserts nothing; prints
// figures (the machines here are shared and noisy).
//
// The server's RSS swings by ±10% between two turns as its garbage collector runs, so one sample
// after the warm-up against one at the end says more about the collector than about a leak. It is
// sampled after every 5th turn, and the growth is the median of the last 40 turns' samples against
// the median of the 40 turns after the warm-up. `--driver opencode` drives the same turns with
// opencode's own client (`opencode run --attach --auto`): the baseline that tells the server's own
// growth from anything oc-exec's requests cause.
//
//   npm run soak:server [-- --turns 200] [--ephemeral] [--driver oc-exec|opencode]
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { bundledBinary } from "../../src/domain/opencode/locate.js";
import { makeHermeticHome } from "../../src/domain/scripted/hermetic-home.js";
import { startModelServer } from "../../src/domain/scripted/model-server.js";
import { descendants, isAlive } from "../support/procs.js";
import { testReply } from "../support/test-scripts.js";

const { values } = parseArgs({
  options: {
    turns: { type: "string", default: "200" },
    ephemeral: { type: "boolean", default: false },
    driver: { type: "string", default: "oc-exec" },
  },
});
const TURNS = Number(values.turns);
const BIN = fileURLToPath(new URL("../../bin/oc-exec.js", import.meta.url));
const WARM_UP = 20;

const model = await startModelServer(testReply);
const home = makeHermeticHome(model.url, "oc-exec-soak-");
const env = { ...home.env, OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) };

// The binary oc-exec itself runs: the platform package's, whether or not opencode-ai's postinstall ran.
const OPENCODE = bundledBinary()!.path;
if (values.driver !== "oc-exec" && values.driver !== "opencode") throw new Error("--driver oc-exec|opencode");
if (values.driver === "opencode" && values.ephemeral) throw new Error("opencode run has no --ephemeral");

function run(args: string[], file = process.execPath): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, file === process.execPath ? [BIN, ...args] : args, {
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

const started = await run(["server", "start", "--idle-timeout", "30m"]);
const url = started.stdout.trim();
const dir = join(home.env.XDG_STATE_HOME!, "oc-exec", "servers");
const record = JSON.parse(readFileSync(join(dir, readdirSync(dir).find((n) => n.endsWith(".json"))!), "utf8")) as {
  pid: number;
  supervisor_pid: number;
  password: string;
};
const codes = new Map<number, number>();
const samples: { turn: number; rss: number }[] = [];
let afterWarmUp = { fds: 0, children: 0 };
const t0 = Date.now();
for (let i = 1; i <= TURNS; i++) {
  const tool = i % 2 === 0;
  const prompt = tool ? "scenario:tool run echo" : "scenario:plain hi";
  const turn =
    values.driver === "opencode"
      ? await run(
          ["run", "--attach", url, "--password", record.password, "--format", "json", "--auto", prompt],
          OPENCODE,
        )
      : await run([
          "-q",
          "--attach",
          url,
          ...(values.ephemeral ? ["--ephemeral"] : []),
          ...(tool ? ["--auto", prompt] : [prompt]),
        ]);
  codes.set(turn.code ?? -1, (codes.get(turn.code ?? -1) ?? 0) + 1);
  if (i === WARM_UP) afterWarmUp = { fds: fds(record.pid), children: descendants(record.pid).length };
  if (i > WARM_UP && i % 5 === 0) samples.push({ turn: i, rss: rss(record.pid) });
}
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const early = median(samples.filter((s) => s.turn <= WARM_UP + 40).map((s) => s.rss));
const late = median(samples.filter((s) => s.turn > TURNS - 40).map((s) => s.rss));
const all = samples.map((s) => s.rss);
const seconds = (Date.now() - t0) / 1000;
const end = { fds: fds(record.pid), children: descendants(record.pid).length };
const leftTurns = descendants(process.pid).filter(
  (p) => p.cmdline.includes("oc-exec.js") && !p.cmdline.includes("supervise"),
);
await run(["server", "stop", url]);
const gone = !isAlive(record.pid) && !isAlive(record.supervisor_pid);
await model.close();
home.cleanup();
process.stdout.write(
  `${[
    `server soak: ${TURNS} turns by ${values.driver} (text and tool with a live permission answer alternating${values.ephemeral ? ", --ephemeral" : ""}) on one managed server, ${seconds.toFixed(0)} s, ${(seconds / TURNS).toFixed(2)} s per turn`,
    `  exit codes: ${[...codes].map(([c, n]) => `${c}×${n}`).join(", ")}`,
    `  server RSS, median of turns ${WARM_UP + 1}-${WARM_UP + 40}: ${mb(early)} MB; of the last 40 turns: ${mb(late)} MB: growth ${(((late - early) / early) * 100).toFixed(1)}%   (target < 10%)`,
    `  server RSS samples (every 5th turn): ${mb(Math.min(...all))}-${mb(Math.max(...all))} MB; by 50 turns: ${samples
      .filter((s) => s.turn % 50 === 0)
      .map((s) => `${s.turn}: ${mb(s.rss)}`)
      .join(", ")}`,
    `  server fds ${afterWarmUp.fds} -> ${end.fds}; processes under the server ${afterWarmUp.children} -> ${end.children}; oc-exec turn processes left ${leftTurns.length}; server and supervisor gone after stop: ${gone}`,
  ].join("\n")}\n`,
);
