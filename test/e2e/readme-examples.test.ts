// The README's shell examples run as written under `bash -euo pipefail` (GitHub Actions' shell is
// `bash -eo pipefail`): every branch of the exit-code example is reachable.

import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { FAKE_OPENCODE, FIXTURES } from "../support/fixtures.js";
import { isAlive } from "../support/procs.js";
import { BIN, cliOnPath, docExample, runBash } from "../support/run-cli.js";
import { checkStream } from "../support/schema-check.js";
import { readRecords } from "../support/warm-server.js";

const e2e = useE2E();
const example = (name: string) => docExample("README.md", name);

// GitHub Actions runs a step in `bash -e` (no shell: given) or `bash -eo pipefail` (shell: bash).
describe.each([[["-e"]], [["-euo", "pipefail"]]])("README examples under bash %j", (shellFlags) => {
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
    const run = spawnSync("bash", [...shellFlags, "-c", script], {
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

describe("the README's warm-server script, as written, with the real opencode", () => {
  it("server start, 20 turns with --attach, server stop: every line valid, every exit 0, nothing left running", async () => {
    const bin = cliOnPath(e2e.home.root);
    const cwd = mkdtempSync(join(e2e.home.root, "warm-"));
    // As in a CI step: stdin is not a pipe someone holds open (that would cost each turn the stdin
    // wait: see "stdin_timeout").
    const run = await runBash(["-euo", "pipefail"], example("warm-server"), {
      cwd,
      env: { ...e2e.home.env, PATH: `${bin}:${e2e.home.env.PATH}` },
    });
    expect(run.stderr).toMatch(/stopped http:\/\/127\.0\.0\.1:\d+/);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("0 of 20 turns failed\n");
    const files = readdirSync(cwd).filter((f) => f.endsWith(".jsonl"));
    expect(files).toHaveLength(20);
    for (const file of files) {
      const events = checkStream(readFileSync(join(cwd, file), "utf8"));
      expect(events.at(-1)).toMatchObject({ type: "result", class: "success", exit_code: 0 });
      expect(events.map((e) => e.type)).toEqual([
        "run.started",
        "session.started",
        "step.started",
        "message",
        "step.finished",
        "result",
      ]);
    }
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!)).toEqual([]);
    const leftovers = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          // Every process the script started inherited the throwaway HOME.
          const environ = readFileSync(`/proc/${p}/environ`, "utf8").split("\0");
          return environ.includes(`HOME=${e2e.home.root}`) && isAlive(Number(p));
        } catch {
          return false;
        }
      });
    expect(leftovers).toEqual([]);
  }, 120_000);
});

describe("the README's batch and conversation examples, as written, with the real opencode", () => {
  const runExample = (name: string, cwd: string, shell = ["-euo", "pipefail"]) => {
    const bin = cliOnPath(e2e.home.root);
    return runBash(shell, example(name), { cwd, env: { ...e2e.home.env, PATH: `${bin}:${e2e.home.env.PATH}` } });
  };

  it("batch: three tasks in their packages, every task succeeds", async () => {
    const cwd = mkdtempSync(join(e2e.home.root, "monorepo-"));
    for (const p of ["api", "web", "cli"]) mkdirSync(join(cwd, "packages", p), { recursive: true });
    const run = await runExample("batch", cwd);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("every task succeeded\n");
    const events = checkStream(readFileSync(join(cwd, "batch.jsonl"), "utf8"));
    expect(events.at(-1)).toMatchObject({ type: "batch.result", ok: true, counts: { success: 3 } });
    const started = events.filter((e) => e.type === "run.started");
    expect(started.map((e) => (e.type === "run.started" ? [e.task_id, e.cwd] : null)).sort()).toEqual(
      ["api", "cli", "web"].map((p) => [p, join(cwd, "packages", p)]),
    );
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!)).toEqual([]);
  }, 120_000);

  // Its pipeline is the one place the two shells of GitHub Actions can differ: both run it.
  it.each([[["-euo", "pipefail"]], [["-e"]]])(
    "conversation under bash %j: two turns, one session",
    async (shell) => {
      const cwd = mkdtempSync(join(e2e.home.root, "conv-"));
      const run = await runExample("conversation", cwd, shell);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe("turn 1: success\nturn 2: success\nconversation exit 0\n");
      const events = checkStream(readFileSync(join(cwd, "conversation.jsonl"), "utf8"));
      expect(events.at(-1)).toMatchObject({ type: "conversation.result", ok: true, exit_code: 0 });
    },
    120_000,
  );
});
