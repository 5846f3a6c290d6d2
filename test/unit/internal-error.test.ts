// A bug inside oc-exec still ends in a result line with class internal_error (70).
import { describe, expect, it, onTestFinished } from "vitest";
import { TurnControl } from "../../src/engine/control.js";
import { executeTurn as execute } from "../../src/engine/execute.js";
import { makeBackend } from "../../src/hosts/make-backend.js";
import type { RunTurnOptions } from "../../src/plan/options.js";
import { type Internals, resolveTurnOptions } from "../../src/plan/resolve-options.js";

/** The engine with options resolved as runTurn resolves them. */
const executeTurn = (
  options: Omit<RunTurnOptions, "prompt"> & { prompt: string | Internals["prompt"] },
  sink: Parameters<typeof execute>[2],
  control = new TurnControl(),
) => {
  const { prompt, ...rest } = options;
  const resolved =
    typeof prompt === "string" ? resolveTurnOptions({ ...rest, prompt }) : resolveTurnOptions(rest, { prompt });
  return execute(resolved, makeBackend(resolved.placement), sink, control);
};

import type { OcEvent } from "../../src/contract/schema.js";
import { FAKE_OPENCODE } from "../support/fixtures.js";

describe("internal errors", () => {
  it("an exception while handling opencode's output stops the turn and reports internal_error", async () => {
    const events: OcEvent[] = [];
    const result = await executeTurn(
      { prompt: "x", opencode: FAKE_OPENCODE, env: { ...process.env, FAKE_OPENCODE_MODE: "ok" } },
      (event) => {
        if (event.type === "message") throw new Error("simulated bug in an event consumer");
        events.push(event);
      },
    );
    expect(result.class).toBe("internal_error");
    expect(result.exit_code).toBe(70);
    expect(result.error!.message).toMatch(/^oc-exec failed: Error: simulated bug in an event consumer/);
    expect(result.error!.message).toContain("This is a bug in oc-exec; please report it.");
    expect(events.at(-1)).toBe(result);
  });

  it("an exception before opencode starts also ends in a result", async () => {
    const events: OcEvent[] = [];
    const result = await executeTurn(
      {
        prompt: async () => {
          throw new TypeError("cannot read properties of undefined");
        },
        opencode: FAKE_OPENCODE,
      },
      (e) => events.push(e),
    );
    expect(result.class).toBe("internal_error");
    expect(events.map((e) => e.type)).toEqual(["run.started", "result"]);
  });
});

describe("runTurn", () => {
  it("a consumer that stops early stops the turn: opencode and its children are gone", async () => {
    const { runTurn } = await import("../../src/app/run-turn.js");
    const { mkdtempSync, readFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { isAlive, waitFor } = await import("../support/procs.js");
    const tmp = mkdtempSync(join(tmpdir(), "oc-exec-early-"));
    onTestFinished(() => rmSync(tmp, { recursive: true, force: true }));
    const pidfile = join(tmp, "pids");
    const env = {
      ...process.env,
      FAKE_OPENCODE_MODE: "hang",
      FAKE_CHILD_PIDFILE: pidfile,
      XDG_CACHE_HOME: join(tmp, "cache"),
    };
    const readPids = () => {
      try {
        return readFileSync(pidfile, "utf8").trim() || null;
      } catch {
        return null;
      }
    };
    let pids = "";
    for await (const event of runTurn({ prompt: "x", opencode: FAKE_OPENCODE, env, killAfterMs: 500 })) {
      if (event.type !== "step.started") continue;
      pids = await waitFor(readPids, 5000, "pidfile");
      // Still running while the consumer reads; the break below is what stops them.
      expect(pids.split(" ").map(Number).every(isAlive)).toBe(true);
      break;
    }
    const [opencodePid, childPid] = pids.split(" ").map(Number);
    await waitFor(() => !isAlive(opencodePid!) && !isAlive(childPid!), 5000, "the turn's processes to end");
    expect(isAlive(opencodePid!)).toBe(false);
    expect(isAlive(childPid!)).toBe(false);
  });

  it("a turn stopped while its consumer holds it back is read again, so opencode shuts down gracefully instead of by SIGKILL", async () => {
    const control = new TurnControl();
    // A graceful opencode: on SIGTERM it writes a last line, waits until that is out, exits 0.
    // Held back, the write would never get out and only SIGKILL would end it.
    const env = {
      ...process.env,
      FAKE_OPENCODE_MODE: "flood",
      FAKE_FLOOD_MB: "50",
      FAKE_TERM_EXIT: "0",
      FAKE_TERM_FLUSH: "1",
    };
    let messages = 0;
    const result = await executeTurn(
      { prompt: "x", opencode: FAKE_OPENCODE, env, killAfterMs: 500 },
      (event) => {
        // A consumer that falls behind, then gives up: what a `break` out of runTurn amounts to.
        if (event.type === "message" && ++messages === 100) {
          control.backpressure(true);
          setTimeout(() => control.abort({ kind: "interrupted", signal: "abort" }), 200);
        }
      },
      control,
    );
    expect(result.class).toBe("interrupted");
    expect(result.exit_code).toBe(130);
    expect(messages).toBeGreaterThanOrEqual(100);
    expect(result.opencode).toEqual({ exit_code: 0, signal: null });
  }, 20_000);
});

describe("the launcher without a build", () => {
  it("a missing dist/ is an internal error (70, from the exit-code table) for a turn and for --version", async () => {
    const { copyFileSync, mkdirSync, mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { spawnSync } = await import("node:child_process");
    const { EXIT_CODES } = await import("../../src/contract/exit-codes.js");
    const tmp = mkdtempSync(join(tmpdir(), "oc-exec-nobuild-"));
    onTestFinished(() => rmSync(tmp, { recursive: true, force: true }));
    const bin = join(tmp, "bin");
    mkdirSync(bin);
    for (const file of ["oc-exec.js", "package.json"])
      copyFileSync(new URL(`../../bin/${file}`, import.meta.url), join(bin, file));
    for (const args of [["x"], ["--version"]]) {
      const run = spawnSync(process.execPath, [join(bin, "oc-exec.js"), ...args], { encoding: "utf8" });
      expect(run.status).toBe(EXIT_CODES.internal_error);
      expect(run.stderr).toMatch(/^oc-exec: internal error: .*(Cannot find module|ERR_MODULE_NOT_FOUND)/);
      expect(run.stdout).toBe("");
    }
  });
});
