// Every release gives the same answer: 2.x and cut-off streams through the CLI (the fake opencode
// replays shaped fixtures, since no 2.x binary can be installed), and with the real 1.18.33 what
// it can produce: costs that add up, and replay --dir.
import { mkdtempSync, readFileSync } from "node:fs";
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
    expect(call.argv).toEqual(["run", "--format", "json", "--title", "go"]);
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
