// oc-exec killed outright (kill -9: the OOM killer, a runner's hard kill) in the middle of a tool
// call: opencode and the tool it started must not live on and keep paying the model. The watcher
// of src/sys/orphan-guard.ts ends them. Every process of the turn inherits the throwaway HOME,
// so "nothing left" is checked by that.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { processesWithHome } from "../support/escape.js";
import { waitFor } from "../support/procs.js";
import { BIN } from "../support/run-cli.js";

const e2e = useE2E();

const cmdline = (pid: string) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
  } catch {
    return "";
  }
};

describe.skipIf(process.platform !== "linux")("nothing survives a killed oc-exec", () => {
  it("kill -9 of oc-exec during a tool call: opencode and the tool are gone within seconds", async () => {
    const child = spawn(process.execPath, [BIN, "-q", "--auto", "scenario:sleep-tool orphans"], {
      cwd: e2e.workspace(),
      env: e2e.home.env,
      stdio: ["ignore", "ignore", "ignore"],
    });
    const home = e2e.home.root;
    await waitFor(
      () => processesWithHome(home).some((p) => cmdline(p) === "sleep 300"),
      60_000,
      "the tool (sleep 300) to start",
    );
    const before = processesWithHome(home).length;
    expect(before).toBeGreaterThanOrEqual(2);
    child.kill("SIGKILL");
    await waitFor(() => processesWithHome(home).length === 0, 10_000, "every process of the turn to end");
    expect(processesWithHome(home)).toEqual([]);
  }, 90_000);
});
