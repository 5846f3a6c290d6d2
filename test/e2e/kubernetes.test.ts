// The Kubernetes recipe in docs/ proven locally: docs/kubernetes-batch.yaml parsed as YAML, its
// Indexed Job checked for what makes it safe (indices mapped onto shards, no retry of a pod that
// exited 1, 5 or 6), and its containers' scripts, taken as written, run by /bin/sh as Kubernetes
// would run them: every index, a retried index, then the merge, with the real opencode and the
// scripted model.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { BatchResult } from "../../src/contract/schema.js";
import { useE2E } from "../support/e2e.js";
import { junitErrors } from "../support/junit-check.js";
import { cliOnPath } from "../support/run-cli.js";
import { checkStream } from "../support/schema-check.js";

const e2e = useE2E();

type Container = {
  name: string;
  command: string[];
  args: string[];
  env: { name: string; value?: string }[];
};
type JobSpec = {
  metadata: { name: string };
  spec: {
    completionMode?: string;
    completions?: number;
    parallelism?: number;
    backoffLimit?: number;
    backoffLimitPerIndex?: number;
    podFailurePolicy?: {
      rules: {
        action: string;
        onExitCodes?: { containerName: string; operator: string; values: number[] };
        onPodConditions?: { type: string }[];
      }[];
    };
    template: { spec: { restartPolicy: string; containers: Container[] } };
  };
};

const manifest = parseAllDocuments(
  readFileSync(new URL("../../docs/kubernetes-batch.yaml", import.meta.url), "utf8"),
).map((d) => {
  expect(d.errors).toEqual([]);
  return d.toJS() as JobSpec & { kind: string };
});
const job = (name: string) => manifest.find((d) => d.kind === "Job" && d.metadata.name === name)!;
const container = (j: JobSpec) => j.spec.template.spec.containers[0]!;
const envOf = (c: Container) =>
  Object.fromEntries(c.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));

/** A container's script as Kubernetes runs it: its command with its args. */
function runContainer(c: Container, env: NodeJS.ProcessEnv, cwd: string) {
  expect(c.command).toEqual(["/bin/sh", "-c"]);
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(c.command[0]!, [...c.command.slice(1), c.args[0]!], {
      env,
      cwd,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

describe("docs/kubernetes-batch.yaml", () => {
  it("an Indexed Job of SHARDS pods that never retries a pod that exited 1, 5 or 6; an eviction is not counted", () => {
    const shards = job("oc-exec-shards");
    const shardCount = Number(envOf(container(shards)).SHARDS);
    expect(shardCount).toBeGreaterThan(1);
    expect(shards.spec).toMatchObject({
      completionMode: "Indexed",
      completions: shardCount,
      parallelism: shardCount,
    });
    expect(shards.spec.backoffLimitPerIndex).toBeGreaterThan(0);
    expect(shards.spec.template.spec.restartPolicy).toBe("Never");
    expect(shards.spec.podFailurePolicy!.rules).toEqual([
      { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget" }] },
      {
        action: "FailIndex",
        onExitCodes: { containerName: container(shards).name, operator: "In", values: [1, 5, 6, 126, 127] },
      },
    ]);
    const merge = job("oc-exec-merge");
    expect(merge.spec.backoffLimit).toBe(0);
    expect(envOf(container(merge)).SHARDS).toBe(String(shardCount));
    // Both Jobs name the same batch directory and the oc-exec the image's set-up note installs.
    expect(envOf(container(merge)).RUN).toBe(envOf(container(shards)).RUN);
    for (const c of [container(shards), container(merge)])
      expect(envOf(c).OC_EXEC).toBe("/workspace/node_modules/.bin/oc-exec");
  });

  it("every index runs its shard, a retried index resumes, the merge accounts for every task once and exits 0", async () => {
    const shards = job("oc-exec-shards");
    const merge = job("oc-exec-merge");
    const shardCount = Number(envOf(container(shards)).SHARDS);
    const workspace = mkdtempSync(join(e2e.home.root, "k8s-workspace-"));
    const volume = mkdtempSync(join(e2e.home.root, "k8s-results-"));
    const results = join(volume, `run-${envOf(container(shards)).RUN}`);
    const tasks = Array.from({ length: 8 }, (_, i) => ({ id: `pkg-${i + 1}`, prompt: `scenario:plain k8s-${i + 1}` }));
    writeFileSync(join(workspace, "tasks.jsonl"), `${tasks.map((t) => JSON.stringify(t)).join("\n")}\n`);
    // The image's paths, here: the workspace and the results volume are temporary directories.
    const env = (c: Container, extra: Record<string, string> = {}) => ({
      ...e2e.home.env,
      ...envOf(c),
      TASKS: join(workspace, "tasks.jsonl"),
      RESULTS: volume,
      // The image's /workspace/node_modules/.bin/oc-exec, here.
      OC_EXEC: join(cliOnPath(e2e.home.root), "oc-exec"),
      ...extra,
    });

    for (let index = 0; index < shardCount; index++) {
      const pod = await runContainer(
        container(shards),
        env(container(shards), { JOB_COMPLETION_INDEX: String(index) }),
        workspace,
      );
      expect(pod.code).toBe(0);
      expect(readFileSync(join(results, `shard-${index + 1}.done`), "utf8")).toBe("0\n");
    }
    const requests = e2e.server.requests.length;
    expect(tasks.every((t) => e2e.requestsFor(`${t.id.replace("pkg", "k8s")}`).length === 1)).toBe(true);

    // Index 0's pod again, as after its node was lost: it resumes, and pays for nothing twice.
    const retried = await runContainer(
      container(shards),
      env(container(shards), { JOB_COMPLETION_INDEX: "0" }),
      workspace,
    );
    expect(retried.code).toBe(0);
    expect(retried.stderr).toContain(
      `shard 1: attempt after an interrupted one; resuming from ${results}/previous-1.jsonl`,
    );
    expect(e2e.server.requests.length).toBe(requests);

    const merged = await runContainer(container(merge), env(container(merge)), workspace);
    expect(merged.code).toBe(0);
    const events = checkStream(readFileSync(join(results, "batch.jsonl"), "utf8"));
    const summary = events.at(-1) as BatchResult;
    expect(summary.tasks.map((t) => [t.id, t.class])).toEqual(tasks.map((t) => [t.id, "success"]));
    expect(summary.problems).toEqual([]);
    expect(await junitErrors(readFileSync(join(results, "oc-exec.xml"), "utf8"))).toEqual([]);

    // A shard that never finished: the merge waits no longer than it was told, then names what is missing (exit 5).
    rmSync(join(results, `shard-${shardCount}.done`));
    rmSync(join(results, `shard-${shardCount}.jsonl`));
    const incomplete = await runContainer(container(merge), env(container(merge), { WAIT_SECONDS: "0" }), workspace);
    expect(incomplete.code).toBe(5);
    expect(incomplete.stderr).toContain(
      `only ${shardCount - 1} of ${shardCount} shards finished; merging what there is`,
    );
    expect(incomplete.stderr).toContain(`shard-${shardCount}.jsonl`);
    expect(existsSync(join(results, "batch.jsonl"))).toBe(true);

    // The manifest applied again for a new batch (RUN changed) on the same volume: its merge finds
    // none of the last batch's markers (it merged them at once, with tasks missing, and exited 5).
    const next = await runContainer(
      container(merge),
      env(container(merge), { RUN: "2", WAIT_SECONDS: "0" }),
      workspace,
    );
    expect(next.stderr).toContain(`only 0 of ${shardCount} shards finished; merging what there is`);
  }, 240_000);
});
