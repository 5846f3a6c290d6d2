// A call to a tool the agent does not offer, with the real opencode: a denial only when oc-exec's
// own policy removed the tool; otherwise a warning, and the turn is judged by how it ends.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { providerConfig } from "../../src/domain/scripted/hermetic-home.js";
import { useE2E } from "../support/e2e.js";
import { eventsOf } from "../support/run-cli.js";

const e2e = useE2E();

describe("a model calls a tool the agent does not offer", () => {
  it("opencode's own configuration removed it: an unavailable_tool warning, the model recovers with bash: success", async () => {
    const workspace = e2e.workspace();
    const config = { ...JSON.parse(providerConfig(e2e.server.url)), permission: { edit: "deny" } };
    const run = await e2e.run(["-q", "--dir", workspace, "scenario:unavailable-tool fix it"], {
      extraEnv: { OPENCODE_CONFIG_CONTENT: JSON.stringify(config) },
    });
    expect(run.code).toBe(0);
    expect(run.result.class).toBe("success");
    expect(eventsOf(run, "tool").map((t) => [t.tool, t.status])).toEqual([
      ["edit", "error"],
      ["bash", "completed"],
    ]);
    expect(eventsOf(run, "permission.denied")).toEqual([]);
    expect(eventsOf(run, "warning").map((w) => w.code)).toEqual(["unavailable_tool"]);
    expect(readFileSync(join(workspace, "fixed.txt"), "utf8")).toBe("fixed\n");
  });

  it("oc-exec's policy removed it (--deny edit): the policy's denial, exit 2, as before", async () => {
    const workspace = e2e.workspace();
    const run = await e2e.run(["-q", "--dir", workspace, "--deny", "edit", "scenario:unavailable-tool fix it"]);
    expect(run.code).toBe(2);
    expect(run.result.class).toBe("approval_denied");
    expect(eventsOf(run, "permission.denied")).toMatchObject([{ permission: "edit", tool: "edit" }]);
    expect(eventsOf(run, "warning").map((w) => w.code)).not.toContain("unavailable_tool");
    expect(existsSync(join(workspace, "fixed.txt"))).toBe(true);
  });
});
