// docs/github-actions-pr-review.yml proven locally: its review step, taken from the YAML as written,
// runs in bash with the real opencode in the sandbox against the scripted model (configured as the
// step's provider, so the step's own -m applies), and writes the review to the step summary.
import { execFileSync, spawn } from "node:child_process";
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

  it("the prompt's own git command finds the merge base in the checkout as written, not in a depth-1 one", () => {
    // The pull request's repository: main, and a branch with one commit on it.
    const root = mkdtempSync(join(e2e.home.root, "merge-base-"));
    const up = join(root, "up");
    const git = (cwd: string, ...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", ...args], {
        cwd,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
    mkdirSync(up);
    git(up, "init", "-q");
    writeFileSync(join(up, "index.js"), "module.exports = (a, b) => a + b;\n");
    git(up, "add", ".");
    git(up, "commit", "-qm", "base");
    git(up, "checkout", "-qb", "feature");
    writeFileSync(join(up, "index.js"), "module.exports = (a, b) => a - b; // add\n");
    git(up, "commit", "-qam", "the change");
    const head = git(up, "rev-parse", "HEAD").trim();
    // What actions/checkout does for `ref: <sha>`: fetch the commit (at fetch-depth 0, with every
    // branch as origin/*), then check it out.
    const checkout = (name: string, depth: string | null) => {
      const pr = join(root, name);
      mkdirSync(pr);
      git(pr, "init", "-q");
      const refs = depth === null ? ["+refs/heads/*:refs/remotes/origin/*", head] : [head];
      git(pr, "fetch", "-q", ...(depth ? ["--depth", depth] : []), `file://${up}`, ...refs);
      git(pr, "checkout", "-q", head);
      return pr;
    };
    const prompt = /"(Review the changes[^"]*)"/.exec(step("review"))![1]!;
    const command = /\((git diff \S+)/.exec(prompt)![1]!.replaceAll("$BASE_REF", "main");
    expect(command).toBe("git diff origin/main...HEAD");
    expect(workflow).toMatch(/path: pr\n {10}persist-credentials: false\n(?: {10}#.*\n)* {10}fetch-depth: 0\n/);
    const full = checkout("pr", null);
    expect(execFileSync("bash", ["-c", command], { cwd: full, encoding: "utf8" })).toContain(
      "+module.exports = (a, b) => a - b;",
    );
    const shallow = checkout("pr-shallow", "1");
    expect(() => execFileSync("bash", ["-c", command], { cwd: shallow, stdio: "pipe" })).toThrow(/origin\/main/);
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
