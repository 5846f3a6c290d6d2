// The README's shell examples run as written under `bash -euo pipefail` (GitHub Actions' shell is
// `bash -eo pipefail`): every branch of the exit-code example is reachable.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { FAKE_OPENCODE, FIXTURES } from "../support/fixtures.js";
import { BIN } from "../support/run-cli.js";

const e2e = useE2E();
const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

function example(name: string): string {
  const m = new RegExp(`<!-- example: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (!m) throw new Error(`README has no example ${name}`);
  return m[1]!;
}

describe("README examples under bash -euo pipefail", () => {
  const script = example("exit-codes");
  it.each([
    [{ FAKE_OPENCODE_MODE: "ok" }, "done"],
    [{ FAKE_OPENCODE_FIXTURE: join(FIXTURES, "opencode-1.18.33", "api-401") }, "provider API failed; retry later"],
    [
      { FAKE_OPENCODE_FIXTURE: join(FIXTURES, "opencode-1.18.33", "permission-ask") },
      /^needs a permission: opencode needed permission bash/,
    ],
    [{ FAKE_OPENCODE_MODE: "exit-early" }, "failed with 1"],
  ])("%j", (env, expected) => {
    const bin = mkdtempSync(join(e2e.home.root, "bin-"));
    // `oc-exec` on PATH, as after `npm install -g`, driving the fake opencode.
    writeFileSync(
      join(bin, "oc-exec"),
      `#!/bin/sh\nexec "${process.execPath}" "${BIN}" -q --opencode "${FAKE_OPENCODE}" "$@"\n`,
    );
    chmodSync(join(bin, "oc-exec"), 0o755);
    const cwd = mkdtempSync(join(e2e.home.root, "ci-"));
    const run = spawnSync("bash", ["-euo", "pipefail", "-c", script], {
      cwd,
      env: { ...e2e.home.env, ...env, PATH: `${bin}:${e2e.home.env.PATH}` },
      encoding: "utf8",
    });
    expect(run.status).toBe(0);
    const last = run.stdout.trimEnd().split("\n").at(-1)!;
    if (typeof expected === "string") expect(last).toBe(expected);
    else expect(last).toMatch(expected);
  });
});
