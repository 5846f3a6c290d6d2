// oc-exec killed outright during a turn on a server it did not start itself for that turn
// (--attach to `oc-exec server start`'s server, as --warm does): no code of oc-exec's runs to abort
// the session, so the server's supervisor does, from the lease the turn holds (hosts/server/registry.ts).
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { readLeases } from "../../src/hosts/server/registry.js";
import { useE2E } from "../support/e2e.js";
import { descendants, isAlive, waitFor } from "../support/procs.js";
import { BIN } from "../support/run-cli.js";
import { readRecords, useWarmServer } from "../support/warm-server.js";

const e2e = useE2E();
const server = useWarmServer(e2e);

describe.skipIf(process.platform !== "linux")("nothing of a killed oc-exec's turn goes on on a managed server", () => {
  it("kill -9 of oc-exec during a tool call on --attach: the supervisor aborts the turn, and its tool ends", async () => {
    const child = spawn(
      process.execPath,
      [BIN, "-q", "--auto", "--attach", server.url, "scenario:sleep-tool orphans-attach"],
      { cwd: e2e.workspace(), env: e2e.home.env, stdio: ["ignore", "ignore", "ignore"] },
    );
    const sleeping = () => descendants(server.record.pid).filter((p) => p.cmdline === "sleep 300");
    await waitFor(() => sleeping().length > 0, 60_000, "the tool (sleep 300) to start on the server");
    const asked = e2e.requestsFor("orphans-attach").length;
    child.kill("SIGKILL");
    await waitFor(() => sleeping().length === 0, 15_000, "the server to abort the dead oc-exec's turn");
    expect(sleeping()).toEqual([]);
    // Aborted, not finished: the model is not asked again for that session.
    await new Promise((r) => setTimeout(r, 2000));
    expect(e2e.requestsFor("orphans-attach").length).toBe(asked);
  }, 90_000);

  it("a turn that ends normally leaves no lease behind", async () => {
    const run = await e2e.run(["-q", "--attach", server.url, "scenario:plain lease"]);
    expect(run.code).toBe(0);
    expect(readLeases(e2e.home.env, server.record.id)).toEqual([]);
  }, 60_000);

  it("the supervisor killed outright: the orphan watcher ends its opencode serve and everything below it", async () => {
    const started = await e2e.runRaw(["server", "start", "--idle-timeout", "15m"]);
    expect(started.code).toBe(0);
    const record = readRecords(e2e.home.env.XDG_STATE_HOME!).find((r) => r.url === started.stdout.trim())!;
    const below = [record.pid, ...descendants(record.pid).map((p) => p.pid)];
    process.kill(record.supervisor_pid, "SIGKILL");
    await waitFor(() => below.every((p) => !isAlive(p)), 15_000, "the killed supervisor's server to end");
    expect(below.filter(isAlive)).toEqual([]);
    // The dead server's record goes the next time anyone looks.
    const listed = await e2e.runRaw(["server", "list"]);
    expect(listed.stdout).not.toContain(`"id":"${record.id}"`);
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!).find((r) => r.id === record.id)).toBeUndefined();
  }, 90_000);
});
