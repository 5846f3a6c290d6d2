// Every release gives the same answer: 2.x and cut-off streams through the CLI (the fake opencode
// replays shaped fixtures, since no 2.x binary can be installed), and with the real 1.18.33 what
// it can produce: costs that add up, and replay --dir.
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { providerConfig } from "../../src/domain/scripted/hermetic-home.js";
import { useE2E } from "../support/e2e.js";
import { FAKE_OPENCODE, FIXTURES, loadFixture } from "../support/fixtures.js";
import { eventsOf } from "../support/run-cli.js";

const e2e = useE2E();
// One fake binary plays every release: each run gets its own version cache, which is keyed by path.
const freshCache = () => mkdtempSync(join(e2e.home.root, "cache-"));
const viaFake = (version: string, scenario: string) => ({
  extraEnv: {
    FAKE_OPENCODE_FIXTURE: join(FIXTURES, `opencode-${version}`, scenario),
    FAKE_OPENCODE_VERSION: version,
    XDG_CACHE_HOME: freshCache(),
  },
});

describe("opencode 2.x (shaped fixtures, through the CLI)", () => {
  it.each([
    ["tool", 0, "success"],
    ["permission-ask", 2, "approval_denied"],
    ["api-401", 4, "api_error"],
    ["api-429", 4, "api_error"],
    ["context-overflow", 3, "context_overflow"],
    ["unknown-model", 5, "config_error"],
    ["session-not-found", 5, "config_error"],
    ["recovered-error", 0, "success"],
    ["error-then-stop", 4, "api_error"],
    ["no-final-finish", 0, "success"],
  ])("%s: exit %d, %s, with the 2.x warning", async (scenario, code, cls) => {
    const run = await e2e.run(["-q", "--opencode", FAKE_OPENCODE, "go"], viaFake("2.0.14", scenario));
    expect(run.code).toBe(code);
    expect(run.result.class).toBe(cls);
    expect(eventsOf(run, "warning")[0]).toMatchObject({
      code: "untested_opencode",
      message: expect.stringMatching(
        /^opencode 2\.0\.14 is a 2\.x release: oc-exec reads its output from 2\.x's source/,
      ),
    });
  });

  it("the invocation follows 2.x's flags (asked from its help) and sets PWD to the workspace", async () => {
    const record = join(mkdtempSync(join(e2e.home.root, "rec-")), "call.json");
    const ws = e2e.workspace();
    const run = await e2e.run(["-q", "--opencode", FAKE_OPENCODE, "--dir", ws, "go"], {
      extraEnv: {
        FAKE_OPENCODE_MODE: "ok",
        FAKE_OPENCODE_VERSION: "2.0.21",
        FAKE_OPENCODE_RECORD: record,
        XDG_CACHE_HOME: freshCache(),
      },
    });
    expect(run.code).toBe(0);
    const call = JSON.parse(readFileSync(record, "utf8")) as { argv: string[]; env: Record<string, string> };
    expect(call.env.PWD).toBe(ws);
    expect(call.argv).toEqual(["run", "--format", "json", "--standalone", "--title", "go"]);
  });
});

describe("opencode 2.x never gets a turn onto its shared background service", () => {
  // 2.x's `run` without --standalone hands the turn to a per-user service that runs outside any
  // sandbox, without the caller's environment (opencode's server-connection.ts). The fake plays that:
  // such a run leaves its turn in FAKE_OPENCODE_SHARED.
  const v2 = (extra: Record<string, string> = {}) => {
    const dir = mkdtempSync(join(e2e.home.root, "v2-"));
    return {
      shared: join(dir, "shared-service.log"),
      record: join(dir, "call.json"),
      env: (more: Record<string, string> = {}) => ({
        FAKE_OPENCODE_MODE: "ok",
        FAKE_OPENCODE_VERSION: "2.3.1",
        FAKE_OPENCODE_SHARED: join(dir, "shared-service.log"),
        FAKE_OPENCODE_RECORD: join(dir, "call.json"),
        XDG_CACHE_HOME: freshCache(),
        ...extra,
        ...more,
      }),
    };
  };

  it("without oc-exec's --standalone, the invocation oc-exec used to send lands on the shared service", async () => {
    const { shared, env } = v2();
    const { execFileSync } = await import("node:child_process");
    execFileSync(FAKE_OPENCODE, ["run", "--format", "json", "--title", "go", "go"], {
      env: { ...process.env, ...env() },
      input: "",
    });
    expect(readFileSync(shared, "utf8")).toBe("a turn on the shared service: run --format json --title go go\n");
  });

  it("a 2.x whose run has --standalone: the turn runs on its own private server, nothing reaches the shared one", async () => {
    const { shared, record, env } = v2();
    const run = await e2e.run(["-q", "--opencode", FAKE_OPENCODE, "go"], { extraEnv: env() });
    expect(run.code).toBe(0);
    expect(run.result.class).toBe("success");
    expect((JSON.parse(readFileSync(record, "utf8")) as { argv: string[] }).argv).toContain("--standalone");
    expect(existsSync(shared)).toBe(false);
  });

  it("a 2.x without --standalone: exit 5 before any turn, naming the way out; nothing reaches the shared service", async () => {
    const { shared, record, env } = v2({ FAKE_OPENCODE_NO_STANDALONE: "1" });
    const run = await e2e.run(["-q", "--opencode", FAKE_OPENCODE, "go"], { extraEnv: env() });
    expect(run.code).toBe(5);
    expect(run.result.class).toBe("config_error");
    expect(run.result.error).toEqual({
      name: "UnsupportedRelease",
      message:
        "opencode 2.3.1 has no `run --standalone`: its `run` would send the turn to opencode's shared background service (outside any sandbox, without this environment), so oc-exec does not run it; run it through ACP instead (--acp opencode)",
      status_code: null,
      retryable: null,
    });
    expect(existsSync(shared)).toBe(false);
    expect(existsSync(record)).toBe(false);
  });

  it.each([
    ["/api/health", "a server whose API moved under /api/"],
    ["/global/health", "a 2.x server that still answers 1.x's health route"],
  ])(
    "--attach to a 2.x server (%s, %s): exit 5 saying what to use instead, and no session asked for",
    async (route) => {
      const asked: string[] = [];
      const server = createServer((req, res) => {
        asked.push(`${req.method} ${req.url}`);
        if (req.url === route) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ healthy: true, version: "2.3.1" }));
        } else res.writeHead(404).end();
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const run = await e2e.run(["-q", "--attach", url, "go"]);
        expect(run.code).toBe(5);
        expect(run.result.error).toMatchObject({
          name: "OpencodeServer2x",
          message: `the opencode server at ${url} is opencode 2.3.1: 2.x moved its API under /api/ and runs a turn its own way, which oc-exec's server backend does not speak (it speaks 1.x's, tested with 1.18.33); run the turn without a server (oc-exec runs \`opencode run --standalone\` with a 2.x binary), or through ACP (--acp opencode)`,
        });
        expect(asked.filter((a) => a.includes("session"))).toEqual([]);
      } finally {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      }
    },
  );

  it("server start with a 2.x binary: exit 5 before any server starts", async () => {
    const { env } = v2();
    const run = await e2e.runRaw(["server", "start", "--opencode", FAKE_OPENCODE], { extraEnv: env() });
    expect(run.code).toBe(5);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("opencode 2.3.1's server is 2.x's API, which oc-exec's server backend does not speak");
  });

  it("--ephemeral with 2.x: its session delete would reach the shared service, so it is refused before the turn", async () => {
    const { shared, record, env } = v2();
    const run = await e2e.run(["-q", "--opencode", FAKE_OPENCODE, "--ephemeral", "go"], { extraEnv: env() });
    expect(run.code).toBe(5);
    expect(run.result.error).toMatchObject({
      name: "UnsupportedFlag",
      message: "opencode 2.3.1 does not support --ephemeral (its session delete would reach the shared service)",
    });
    expect(existsSync(shared)).toBe(false);
    expect(existsSync(record)).toBe(false);
  });
});

describe("a cut-off stream is not a success", () => {
  it("1.14.50 exiting 0 mid-step: agent_error, 1, saying so", async () => {
    const run = await e2e.run(["-q", "--opencode", FAKE_OPENCODE, "go"], viaFake("1.14.50", "cut-off"));
    expect(run.code).toBe(1);
    expect(run.result.error).toEqual({
      name: "StreamEnded",
      message:
        "opencode's stream ended mid-step: step 2 started and never finished (opencode exited with status 0, with no answer)",
      status_code: null,
      retryable: null,
    });
  });
});

describe("with the real opencode 1.18.33", () => {
  it("result.cost_usd is exactly the sum of the steps' cost_usd", async () => {
    const config = JSON.parse(providerConfig(e2e.server.url)) as {
      provider: { fake: { models: Record<string, object> } };
    };
    // Prices whose products need more than eight decimals: rounding the total would show.
    config.provider.fake.models["fake-model"] = { name: "Fake", cost: { input: 1.23457, output: 3.21987 } };
    const run = await e2e.run(["-q", "scenario:tool run echo"], {
      extraEnv: { OPENCODE_CONFIG_CONTENT: JSON.stringify(config) },
    });
    expect(run.code).toBe(0);
    const steps = eventsOf(run, "step.finished").map((s) => s.cost_usd);
    expect(steps).toHaveLength(2);
    expect(steps.every((c) => c > 0)).toBe(true);
    expect(run.result.cost_usd).toBe(steps.reduce((sum, c) => sum + c, 0));
  });

  it("replay --dir makes file.changed paths relative to the recorded workspace", async () => {
    const fixture = loadFixture("1.18.33", "write")!;
    const elsewhere = await e2e.run(["replay", "-q", fixture.dir], { cwd: e2e.workspace() });
    expect(eventsOf(elsewhere, "file.changed")).toMatchObject([{ path: "/tmp/oc-exec-fixture/workspace/notes.txt" }]);
    const recorded = await e2e.run(["replay", "-q", "--dir", "/tmp/oc-exec-fixture/workspace", fixture.dir], {
      cwd: e2e.workspace(),
    });
    expect(eventsOf(recorded, "file.changed")).toMatchObject([{ path: "notes.txt", change: "added" }]);
    expect(recorded.result.files_changed).toEqual([{ path: "notes.txt", change: "added" }]);
  });
});
