// --rehearse: every scenario gives its documented class and exit code, with the real opencode and
// the built-in scripted model, touching nothing of the caller's.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EXIT_CODES } from "../../src/contract/exit-codes.js";
import { REHEARSALS } from "../../src/domain/scripted/rehearsals.js";
import { eventsOf, runCli } from "../support/run-cli.js";

// A caller with no provider configured and an empty workspace: the rehearsal needs neither.
const home = mkdtempSync(join(tmpdir(), "oc-exec-caller-"));
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, "config") };

describe("--rehearse", () => {
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const names = Object.keys(REHEARSALS) as (keyof typeof REHEARSALS)[];
  it.each(names)("%s", async (name) => {
    const want = REHEARSALS[name];
    const run = await runCli(["-q", "--rehearse", name], { env, cwd: home });
    expect(run.result.class).toBe(want.expect);
    expect(run.code).toBe(EXIT_CODES[want.expect]);
    expect(run.events[1]).toMatchObject({ type: "warning", code: "rehearsal" });
    if (want.expect === "success") expect(run.result.model).toBe("rehearsal/scripted");
    // The caller's directory and HOME are untouched; the throwaway HOME is gone.
    expect(readdirSync(home)).toEqual([]);
    expect(run.events[0]).toMatchObject({ type: "run.started" });
    const cwd = (run.events[0] as { cwd: string }).cwd;
    expect(cwd).not.toBe(home);
    expect(existsSync(cwd)).toBe(false);
  });

  it.each([
    ["overloaded", ["--retry", "1", "--retry-delay", "0"], { attempts: 2 }],
    ["stall-once", ["--retry", "1", "--retry-delay", "0"], { attempts: 2 }],
    ["verify-fix", ["--verify", "test -f fixed.txt"], { verification: { passed: true, rounds: 2 } }],
  ] as const)("%s with %j: success, as the table says", async (name, flags, fields) => {
    const run = await runCli(["-q", "--rehearse", name, ...flags], { env, cwd: home });
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ class: "success", ...fields });
    expect(readdirSync(home)).toEqual([]);
  });

  it("OC_EXEC_REHEARSE does the same; an unknown scenario is a usage error naming them", async () => {
    const viaEnv = await runCli(["-q", "hi"], { env: { ...env, OC_EXEC_REHEARSE: "denied" }, cwd: home });
    expect(viaEnv.code).toBe(2);
    expect(eventsOf(viaEnv, "permission.denied")).toHaveLength(1);
    const bad = await runCli(["-q", "--rehearse", "flaky"], { env, cwd: home });
    expect(bad.code).toBe(5);
    expect(bad.result.error!.message).toBe(
      `--rehearse takes one of ${Object.keys(REHEARSALS).join(", ")}, not "flaky"`,
    );
  });
});
