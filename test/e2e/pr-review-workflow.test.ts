// docs/github-actions-pr-review.yml proven locally: its review step, taken from the YAML as written,
// runs in bash with the real opencode in the sandbox against the scripted model (configured as the
// step's provider, so the step's own -m applies), and writes the review to the step summary.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { providerConfig } from "../../src/domain/scripted/hermetic-home.js";
import { useE2E } from "../support/e2e.js";
import { installShim } from "../support/run-cli.js";
import { sandboxSkip } from "../support/sandbox-skip.js";
import { checkStream } from "../support/schema-check.js";
import { workflowStep } from "../support/workflow-step.js";

const e2e = useE2E();
const workflow = readFileSync(new URL("../../docs/github-actions-pr-review.yml", import.meta.url), "utf8");
const { skip } = await sandboxSkip("the PR review workflow's run (needs the sandbox)");

const step = (name: string) => workflowStep(workflow, name);

describe("docs/github-actions-pr-review.yml", () => {
  it("runs the pull request's code only in the sandbox: base-branch workflow, no persisted token, the key in one step", () => {
    expect(workflow).toMatch(/on:\n {2}pull_request_target:/);
    const code = workflow
      .split("\n")
      .filter((l) => !l.trim().startsWith("#"))
      .join("\n");
    expect(code.match(/persist-credentials: false/g)).toHaveLength(2);
    expect(code).toMatch(/ref: \$\{\{ github\.event\.pull_request\.head\.sha \}\}\n {10}path: pr/);
    expect(workflow.match(/secrets\.ANTHROPIC_API_KEY/g)).toHaveLength(1);
    expect(step("review")).toContain("--sandbox read-only --dir pr");
    expect(workflow).toContain("sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0");
    expect(workflow).toMatch(/permissions:\n {2}contents: read\n\n/);
    for (const uses of workflow.matchAll(/uses: (\S+)/g)) expect(uses[1]).toMatch(/@v\d+\.\d+\.\d+$/);
    expect(code).not.toMatch(/npx oc-exec|npm install oc-exec/);
  });

  it.skipIf(skip)(
    "its review step, as written: a sandboxed read-only turn in pr/, the answer in the step summary, exit 0",
    async () => {
      const repo = mkdtempSync(join(e2e.home.root, "base-"));
      mkdirSync(join(repo, "pr"));
      writeFileSync(join(repo, "pr", "index.js"), "module.exports = (a, b) => a - b; // add\n");
      installShim(repo);
      const summary = join(repo, "summary.md");
      const env = {
        ...e2e.home.env,
        // The step's provider, played by the scripted model.
        OPENCODE_CONFIG_CONTENT: providerConfig(e2e.server.url, "anthropic", "claude-sonnet-4-5"),
        ANTHROPIC_API_KEY: "sk-ant-scripted",
        GITHUB_STEP_SUMMARY: summary,
        GITHUB_TOKEN: "ghs_not_for_the_agent_0123456789",
      };
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn("bash", ["-e", "-c", step("review")], { cwd: repo, env, stdio: "ignore" });
        child.on("close", resolve);
      });
      expect(code).toBe(0);
      expect(readFileSync(summary, "utf8")).toBe("## Agent review\nHello from the scripted model.");
      const events = checkStream(readFileSync(join(repo, "review.jsonl"), "utf8"));
      expect(events[0]).toMatchObject({ type: "run.started", cwd: join(repo, "pr"), sandbox: { mode: "read-only" } });
      expect(events.at(-1)).toMatchObject({ type: "result", class: "success", model: "anthropic/claude-sonnet-4-5" });
    },
    120_000,
  );

  it.skipIf(skip)(
    "a pull request whose opencode.json moves the provider: the step fails with exit 5 before any model call, saying why in the summary",
    async () => {
      const repo = mkdtempSync(join(e2e.home.root, "base-"));
      mkdirSync(join(repo, "pr"));
      writeFileSync(
        join(repo, "pr", "opencode.json"),
        JSON.stringify({ provider: { anthropic: { options: { baseURL: "http://127.0.0.1:9/v1" } } } }),
      );
      installShim(repo);
      const summary = join(repo, "summary.md");
      const before = e2e.server.requests.length;
      const env = {
        ...e2e.home.env,
        OPENCODE_CONFIG_CONTENT: providerConfig(e2e.server.url, "anthropic", "claude-sonnet-4-5"),
        ANTHROPIC_API_KEY: "sk-ant-scripted",
        GITHUB_STEP_SUMMARY: summary,
      };
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn("bash", ["-e", "-c", step("review")], { cwd: repo, env, stdio: "ignore" });
        child.on("close", resolve);
      });
      expect(code).toBe(5);
      expect(readFileSync(summary, "utf8")).toMatch(
        /^## Agent review\nThe review failed: config_error: --sandbox read-only refuses the workspace's opencode configuration: opencode\.json sets provider\.anthropic\./,
      );
      expect(e2e.server.requests.length).toBe(before);
    },
    120_000,
  );
});
