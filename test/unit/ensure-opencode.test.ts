// One ensure-opencode: the binary located and asked for its version once per run, however many
// callers (hosts, servers, doctor) ask at once, and one wording for a release oc-exec was not
// tested with.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ensureOpencode, untestedWarning } from "../../src/domain/opencode/ensure.js";
import { ALL_FEATURES } from "../../src/domain/opencode/features.js";

describe("ensureOpencode", () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });
  const fake = (version: string) => {
    const root = mkdtempSync(join(tmpdir(), "oc-exec-unit-ensure-"));
    roots.push(root);
    const bin = join(root, "opencode");
    // Counts every question; answers --version, and run --help with nothing oc-exec knows.
    writeFileSync(bin, `#!/bin/sh\necho "$1" >> "${root}/asked"\n[ "$1" = --version ] && echo ${version}\nexit 0\n`);
    chmodSync(bin, 0o755);
    const env = { PATH: process.env.PATH, HOME: root, XDG_CACHE_HOME: join(root, "cache") };
    return { bin, env, asked: () => readFileSync(join(root, "asked"), "utf8").trim().split("\n") };
  };

  it("callers asking at once share one detection: --version is asked once", async () => {
    const { bin, env, asked } = fake("1.18.33");
    const [a, b, c] = await Promise.all([ensureOpencode(bin, env), ensureOpencode(bin, env), ensureOpencode(bin, env)]);
    expect(a).toEqual(b);
    expect(b).toEqual(c);
    expect("binary" in a && a.detected.version).toBe("1.18.33");
    expect(asked()).toEqual(["--version"]);
  });

  it("a binary that is not there is a problem naming the path, not a throw", async () => {
    const missing = join(tmpdir(), "oc-exec-unit-ensure-nowhere", "opencode");
    const found = await ensureOpencode(missing, { PATH: "" });
    expect(found).toMatchObject({ problem: { name: "OpencodeNotFound" }, path: missing });
    expect("problem" in found && found.problem.message).toContain(missing);
  });
});

describe("untestedWarning", () => {
  const detected = (version: string | null, tested = false) => ({ version, features: ALL_FEATURES, tested });

  it("none for a tested release", () => {
    expect(untestedWarning(detected("1.18.33", true))).toBeNull();
  });

  it("a 2.x release is called one; 9.9.9 is not", () => {
    expect(untestedWarning(detected("2.3.1"))?.message).toMatch(/^opencode 2\.3\.1 is a 2\.x release/);
    expect(untestedWarning(detected("9.9.9"))?.message).toMatch(
      /^opencode 9\.9\.9 is not a release oc-exec was tested with \(/,
    );
    expect(untestedWarning(detected(null))?.message).toMatch(/^opencode of unknown version is not a release/);
  });
});
