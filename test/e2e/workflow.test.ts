// The GitHub Actions workflow in docs/ proven locally: its shard step and its merge step, taken
// from the YAML as written, run in bash (the matrix's jobs as separate processes, one after
// another), with the real opencode and the scripted model. The merged stream must account for
// every task once, the step summary must hold the table, and the exit status must follow the rule.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { BatchResult } from "../../src/contract/schema.js";
import { useE2E } from "../support/e2e.js";
import { installShim } from "../support/run-cli.js";
import { checkStream } from "../support/schema-check.js";
import { readRecords } from "../support/warm-server.js";
import { workflowStep } from "../support/workflow-step.js";

const e2e = useE2E();
/** The matrix value the shard step reads, as GitHub Actions writes it. */
const MATRIX_SHARD = ["$", "{{ matrix.shard }}"].join("");
const workflow = readFileSync(new URL("../../docs/github-actions-batch.yml", import.meta.url), "utf8");

const step = (name: string) => workflowStep(workflow, name);

function bash(script: string, cwd: string, env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-e", "-c", script], { cwd, env, stdio: ["ignore", "ignore", "ignore"] });
    child.on("close", resolve);
  });
}

describe("docs/github-actions-batch.yml, run locally", () => {
  it("four shard jobs, then the merge: every task once, the step summary written, exit 1 for failed tasks; a retried shard runs only what failed", async () => {
    const shards = Number(/SHARDS: (\d+)/.exec(workflow)![1]);
    expect(workflow).toContain(`shard: [${Array.from({ length: shards }, (_, i) => i + 1).join(", ")}]`);
    const repo = mkdtempSync(join(e2e.home.root, "repo-"));
    const tasks = Array.from({ length: 10 }, (_, i) => ({
      id: `pkg-${i + 1}`,
      prompt: i === 3 || i === 7 ? `scenario:http-401 wf ${i}` : `scenario:plain wf ${i}`,
    }));
    writeFileSync(join(repo, "tasks.jsonl"), `${tasks.map((t) => JSON.stringify(t)).join("\n")}\n`);
    // ./node_modules/.bin/oc-exec, as after the workflow's install step (checked on its own below).
    installShim(repo);
    const env = { ...e2e.home.env, SHARDS: String(shards), GITHUB_RUN_ATTEMPT: "1" };

    // A shard job fails when a task of it failed, so "Re-run failed jobs" re-runs exactly those.
    const failing = new Set<number>();
    for (let i = 1; i <= shards; i++) {
      const code = await bash(step("shard").replaceAll(MATRIX_SHARD, String(i)), repo, env);
      const failed = readFileSync(join(repo, `shard-${i}.jsonl`), "utf8").includes('"class":"api_error"');
      if (failed) failing.add(i);
      expect(code).toBe(failed ? 1 : 0);
    }
    expect(failing.size).toBeGreaterThan(0);
    mkdirSync(join(repo, "shards"));
    for (let i = 1; i <= shards; i++)
      copyFileSync(join(repo, `shard-${i}.jsonl`), join(repo, "shards", `shard-${i}.jsonl`));
    const summaryFile = join(repo, "summary.md");
    const merged = await bash(step("merge"), repo, { ...env, GITHUB_STEP_SUMMARY: summaryFile });
    expect(merged).toBe(1);
    const events = checkStream(readFileSync(join(repo, "batch.jsonl"), "utf8"));
    const summary = events.at(-1) as BatchResult;
    expect(summary.tasks.map((t) => [t.id, t.class])).toEqual(
      tasks.map((t) => [t.id, t.prompt.includes("401") ? "api_error" : "success"]),
    );
    expect(summary.problems).toEqual([]);
    expect(readFileSync(summaryFile, "utf8")).toContain("| pkg-4 | api_error | 4 | ran |");

    // A re-run of the shard that holds pkg-4: its earlier output comes back as previous/.
    const shardOfFailed = Number(
      /shard-(\d+)/.exec(
        [1, 2, 3, 4]
          .map((i) => `shard-${i}.jsonl`)
          .find((f) => readFileSync(join(repo, f), "utf8").includes('"task_id":"pkg-4"'))!,
      )![1],
    );
    mkdirSync(join(repo, "previous"));
    copyFileSync(join(repo, `shard-${shardOfFailed}.jsonl`), join(repo, "previous", `shard-${shardOfFailed}.jsonl`));
    const before = e2e.server.requests.length;
    const again = await bash(step("shard").replaceAll(MATRIX_SHARD, String(shardOfFailed)), repo, {
      ...env,
      GITHUB_RUN_ATTEMPT: "2",
    });
    // The task still fails (the scripted 401), so the re-run job fails too; it paid only for that task.
    expect(again).toBe(1);
    const rerun = checkStream(readFileSync(join(repo, `shard-${shardOfFailed}.jsonl`), "utf8")).at(-1) as BatchResult;
    expect(rerun.tasks.filter((t) => t.run === "ran").map((t) => t.class)).toEqual(
      rerun.tasks.filter((t) => t.run === "ran").map(() => "api_error"),
    );
    expect(rerun.tasks.filter((t) => t.run === "skipped").every((t) => t.class === "success")).toBe(true);
    const newRequests = e2e.server.requests.slice(before).map((r) => r.userText);
    expect(newRequests.every((text) => text.includes("http-401"))).toBe(true);
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!)).toEqual([]);
  }, 300_000);

  it("installs the pinned tarball only when its SHA-256 matches; never oc-exec from the registry", async () => {
    const code = workflow
      .split("\n")
      .filter((l) => !l.trim().startsWith("#"))
      .join("\n");
    expect(code).not.toMatch(/npx oc-exec|npm install[^\n]* oc-exec(\s|$)/m);
    expect(code).toContain("./node_modules/.bin/oc-exec batch");
    for (const uses of workflow.match(/uses: \S+/g) ?? []) expect(uses).toMatch(/@v\d+\.\d+\.\d+$/);
    expect(workflow).toMatch(/^permissions:\n {2}contents: read\n {2}actions: read$/m);
    const repo = mkdtempSync(join(e2e.home.root, "install-"));
    mkdirSync(join(repo, "vendor"));
    writeFileSync(join(repo, "vendor", "oc-exec-0.1.0.tgz"), "a tarball");
    const sha = createHash("sha256").update("a tarball").digest("hex");
    // npm that records what it was asked: the step must hand it the checked file, nothing else.
    const bin = mkdtempSync(join(e2e.home.root, "npm-"));
    writeFileSync(join(bin, "npm"), `#!/bin/sh\necho "$@" >> "${join(repo, "npm-calls")}"\n`);
    chmodSync(join(bin, "npm"), 0o755);
    const tarball = /OC_EXEC_TARBALL: (\S+)/.exec(workflow)![1]!;
    const base = { PATH: `${bin}:${process.env.PATH}`, OC_EXEC_TARBALL: tarball };
    expect(await bash(step("install"), repo, { ...base, OC_EXEC_SHA256: sha })).toBe(0);
    expect(await bash(step("install-light"), repo, { ...base, OC_EXEC_SHA256: sha })).toBe(0);
    expect(readFileSync(join(repo, "npm-calls"), "utf8").split("\n")).toEqual([
      `install --no-save --no-audit --no-fund ./${tarball}`,
      `install --no-save --no-audit --no-fund --omit=optional --ignore-scripts ./${tarball}`,
      "",
    ]);
    writeFileSync(join(repo, "vendor", "oc-exec-0.1.0.tgz"), "a tarball, swapped");
    expect(await bash(step("install"), repo, { ...base, OC_EXEC_SHA256: sha })).not.toBe(0);
    expect(readFileSync(join(repo, "npm-calls"), "utf8").split("\n")).toHaveLength(3);
  });
});
