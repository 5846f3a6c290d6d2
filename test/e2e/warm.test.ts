// --warm and OC_EXEC_WARM: plain turns on a warm server, with no change to the script. The real
// `opencode serve` (started by oc-exec's supervisor) and the scripted model server, in the file's
// throwaway HOME; every server a test started is stopped by its pid afterwards and checked gone.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ManagedServer } from "../../src/hosts/server/registry.js";
import { useE2E } from "../support/e2e.js";
import { isAlive, waitFor } from "../support/procs.js";
import { cliOnPath, docExample, eventsOf, runBash } from "../support/run-cli.js";
import { checkStream } from "../support/schema-check.js";
import { killServer, readRecords } from "../support/warm-server.js";

const e2e = useE2E();
const records = () => readRecords(e2e.home.env.XDG_STATE_HOME!);
const seen = new Map<number, ManagedServer>();
const remember = (list: ManagedServer[]) => {
  for (const r of list) seen.set(r.pid, r);
  return list;
};

afterEach(() => {
  remember(records());
});
afterAll(async () => {
  for (const record of seen.values()) await killServer(record);
  expect([...seen.values()].filter((r) => isAlive(r.pid) || isAlive(r.supervisor_pid))).toEqual([]);
}, 60_000);

const PLAIN = ["run.started", "session.started", "step.started", "message", "step.finished", "result"];
/** A scope of its own per test: a variable the servers' environment hash covers. */
const scoped = (scope: string, extra: Record<string, string> = {}) => ({
  extraEnv: { OC_EXEC_WARM: "1", OC_TEST_SCOPE: scope, ...extra },
});
const urlOf = (run: Awaited<ReturnType<typeof e2e.run>>) => eventsOf(run, "run.started")[0]!.opencode.url;

describe("--warm: plain turns on a warm server", () => {
  it("a loop of turns: the first starts a server, the others run on it; the same events as cold turns", async () => {
    const ws = e2e.workspace();
    const runs = [];
    for (let i = 0; i < 3; i++)
      runs.push(await e2e.run(["-q", `scenario:plain warm-loop-${i}`], { cwd: ws, ...scoped("loop") }));
    for (const run of runs) {
      expect(run.code).toBe(0);
      expect(run.types).toEqual(PLAIN);
      expect(run.result.text).toBe("Hello from the scripted model.");
      expect(run.stderr).toBe("");
    }
    const urls = new Set(runs.map(urlOf));
    expect(urls.size).toBe(1);
    const servers = remember(records()).filter((r) => r.url === [...urls][0]);
    expect(servers).toHaveLength(1);
    expect(servers[0]).toMatchObject({ dir: ws, idle_timeout_ms: 5 * 60_000 });
    expect(servers[0]!.warm_key).toMatch(/^[0-9a-f]{32}$/);
    // Each turn was its own session on the server.
    expect(new Set(runs.map((r) => r.result.session_id)).size).toBe(3);
  }, 120_000);

  it("two first turns at the same moment share one server", async () => {
    const ws = e2e.workspace();
    const [a, b] = await Promise.all([
      e2e.run(["-q", "scenario:plain warm-together-a"], { cwd: ws, ...scoped("together") }),
      e2e.run(["-q", "scenario:plain warm-together-b"], { cwd: ws, ...scoped("together") }),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(urlOf(a)).toBeDefined();
    expect(urlOf(a)).toBe(urlOf(b));
    expect(remember(records()).filter((r) => r.url === urlOf(a))).toHaveLength(1);
  }, 120_000);

  it("a turn whose tools would see another environment (another step's secret) gets a server of its own", async () => {
    const ws = e2e.workspace();
    const first = await e2e.run(["-q", "scenario:plain warm-env-1"], {
      cwd: ws,
      ...scoped("env", { GITHUB_TOKEN: "ghp_firststepsecret00000000000000000000" }),
    });
    const second = await e2e.run(["-q", "scenario:plain warm-env-2"], {
      cwd: ws,
      ...scoped("env", { GITHUB_TOKEN: "ghp_secondstepsecret0000000000000000000" }),
    });
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(urlOf(first)).not.toBe(urlOf(second));
    // And another workspace, another server.
    const elsewhere = await e2e.run(["-q", "scenario:plain warm-env-3"], {
      cwd: e2e.workspace(),
      ...scoped("env", { GITHUB_TOKEN: "ghp_firststepsecret00000000000000000000" }),
    });
    expect(elsewhere.code).toBe(0);
    expect(new Set([urlOf(first), urlOf(second), urlOf(elsewhere)]).size).toBe(3);
  }, 180_000);

  it("a turn that cannot run on a server runs cold, and says why in a warning", async () => {
    const run = await e2e.run(["-q", "--pure", "scenario:plain warm-pure"], scoped("pure"));
    expect(run.code).toBe(0);
    expect(run.types).toEqual([
      "run.started",
      "warning",
      "session.started",
      "step.started",
      "message",
      "step.finished",
      "result",
    ]);
    expect(eventsOf(run, "warning")[0]).toMatchObject({
      code: "warm_cold",
      message: "ran cold: --pure cannot apply to a server's plugins",
    });
    expect(urlOf(run)).toBeUndefined();
    expect(records().filter((r) => r.dir === e2e.home.workspace && r.warm_key)).toEqual([]);
  }, 90_000);

  it("--config and --text-deltas work under --warm: the server is started with the configuration", async () => {
    const ws = e2e.workspace();
    const config = join(e2e.home.root, "second-model.json");
    writeFileSync(
      config,
      JSON.stringify({
        provider: { fake: { models: { "second-model": { name: "Second" } } } },
        model: "fake/second-model",
      }),
    );
    const run = await e2e.run(["-q", "--warm", "--text-deltas", "--config", config, "scenario:plain warm-config"], {
      cwd: ws,
      extraEnv: { OC_TEST_SCOPE: "config" },
    });
    expect(run.code).toBe(0);
    // The model the configuration names: the server runs with it.
    expect(run.result.model).toBe("fake/second-model");
    expect(run.types).toContain("message.delta");
    expect(urlOf(run)).toBeDefined();
    const plain = await e2e.run(["-q", "--warm", "scenario:plain warm-deltas"], {
      cwd: ws,
      extraEnv: { OC_TEST_SCOPE: "config" },
    });
    expect(plain.code).toBe(0);
    expect(plain.result.model).toBe("fake/fake-model");
    // Another configuration, another server.
    expect(urlOf(plain)).not.toBe(urlOf(run));
  }, 120_000);

  it("OC_EXEC_WARM_IDLE: the server stops itself after that long without a turn", async () => {
    const run = await e2e.run(["-q", "scenario:plain warm-idle"], {
      cwd: e2e.workspace(),
      ...scoped("idle", { OC_EXEC_WARM_IDLE: "3s" }),
    });
    expect(run.code).toBe(0);
    const record = remember(records()).find((r) => r.url === urlOf(run))!;
    expect(record.idle_timeout_ms).toBe(3000);
    await waitFor(() => !isAlive(record.pid) && !isAlive(record.supervisor_pid), 30_000, "the idle server to stop");
    expect(records().find((r) => r.id === record.id)).toBeUndefined();
  }, 90_000);

  it("under GitHub Actions: the registry is in RUNNER_TEMP, and the password is masked in the log", async () => {
    const runnerTemp = mkdtempSync(join(e2e.home.root, "runner-temp-"));
    const run = await e2e.run(["scenario:plain warm-gha"], {
      cwd: e2e.workspace(),
      ...scoped("gha", { GITHUB_ACTIONS: "true", RUNNER_TEMP: runnerTemp, CI: "true" }),
    });
    expect(run.code).toBe(0);
    // The job's registry, not the user's state directory.
    const inJob = remember(readRecords(runnerTemp));
    expect(inJob).toHaveLength(1);
    expect(records().filter((r) => r.url === urlOf(run))).toEqual([]);
    const gha = inJob[0];
    expect(run.stderr).toContain(`::add-mask::${gha!.password}\n`);
    expect(run.stdout).not.toContain(gha!.password);
  }, 90_000);
});

describe("the README's OC_EXEC_WARM example, as written, with the real opencode", () => {
  it("a loop over files: one server for the loop, every turn's stream a success", async () => {
    const script = docExample("README.md", "warm-env");
    const ws = e2e.workspace();
    mkdirSync(join(ws, "src"));
    for (const name of ["a", "b", "c"]) writeFileSync(join(ws, "src", `${name}.ts`), `export const ${name} = 1;\n`);
    const bin = cliOnPath(e2e.home.root);
    const run = await runBash(["-euo", "pipefail"], script, {
      cwd: ws,
      env: { ...e2e.home.env, PATH: `${bin}:${e2e.home.env.PATH}`, OC_TEST_SCOPE: "readme" },
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const urls = ["a", "b", "c"].map((name) => {
      const events = checkStream(readFileSync(join(ws, `summary-${name}.jsonl`), "utf8"));
      expect(events.at(-1)).toMatchObject({ type: "result", class: "success", exit_code: 0 });
      return (events[0] as { opencode: { url?: string } }).opencode.url;
    });
    expect(urls[0]).toBeDefined();
    expect(new Set(urls).size).toBe(1);
    expect(remember(records()).filter((r) => r.url === urls[0])).toHaveLength(1);
  }, 120_000);
});
