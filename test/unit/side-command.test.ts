// runSideCommand's own TMPDIR: opencode's side commands (--version, run --help, models, auth list)
// would each leave a native library in the caller's TMPDIR.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runSideCommand } from "../../src/domain/opencode/side-command.js";

describe("runSideCommand", () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });
  const root = () => {
    const dir = mkdtempSync(join(tmpdir(), "oc-exec-unit-side-"));
    roots.push(dir);
    return dir;
  };
  const script = 'echo "$TMPDIR"; touch "$TMPDIR/.lib-00000000.so"';

  it("ownTmp: the command gets a TMPDIR of its own under the caller's, gone with what it left there", async () => {
    const tmp = root();
    const out = await runSideCommand("/bin/sh", ["-c", script], {
      env: { PATH: process.env.PATH, TMPDIR: tmp },
      timeoutMs: 10_000,
      ownTmp: true,
    });
    expect(out.ok).toBe(true);
    expect(out.stdout).toMatch(new RegExp(`^${tmp}/oc-exec-opencode-${process.pid}-\\w+\\n$`));
    expect(existsSync(out.stdout.trim())).toBe(false);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("without it, the caller's TMPDIR as given", async () => {
    const tmp = root();
    const out = await runSideCommand("/bin/sh", ["-c", script], {
      env: { PATH: process.env.PATH, TMPDIR: tmp },
      timeoutMs: 10_000,
    });
    expect(out.stdout).toBe(`${tmp}\n`);
    expect(readdirSync(tmp)).toEqual([".lib-00000000.so"]);
  });
});
