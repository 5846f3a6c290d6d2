// docs/github-actions-pr-patch.yml proven locally: its agent step, taken from the YAML as written,
// runs in bash with the real opencode in the sandbox against the scripted model playing an agent
// that edits the pull request (and plants a workflow); its apply step, as written, then runs on a
// clean checkout of the same commit: it refuses the patch that touches .github/ without the label,
// applies and commits it with the label, and says so for an empty patch.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { providerConfig } from "../../src/domain/scripted/hermetic-home.js";
import { useE2E } from "../support/e2e.js";
import { attackPrompt } from "../support/escape.js";
import { neutralGit, neutralGitEnv } from "../support/git.js";
import { installShim } from "../support/run-cli.js";
import { sandboxSkip } from "../support/sandbox-skip.js";
import { checkStream } from "../support/schema-check.js";
import { workflowStep } from "../support/workflow-step.js";

const e2e = useE2E();
const workflow = readFileSync(new URL("../../docs/github-actions-pr-patch.yml", import.meta.url), "utf8");
const { skip } = await sandboxSkip("the PR patch workflow's agent step (needs the sandbox)");

const step = (name: string) => workflowStep(workflow, name);
const job = (name: string) => new RegExp(`\\n {2}${name}:\\n([\\s\\S]*?)(?=\\n {2}\\w+:\\n|$)`).exec(workflow)![1]!;
const neutral = neutralGitEnv;
const git = neutralGit;

function runStep(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-e", "-c", script], { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

/** A checkout of the pull request's commit in `<root>/pr`, as the apply job makes it. */
function checkout(origin: string): string {
  const root = mkdtempSync(join(e2e.home.root, "apply-"));
  git(root, "clone", "-q", origin, "pr");
  return root;
}

describe("docs/github-actions-pr-patch.yml", () => {
  it("splits the run: the agent with the key and a read-only token; the writer with no key, running nothing from the pull request", () => {
    const agent = job("agent");
    const apply = job("apply");
    expect(workflow).toMatch(/on:\n {2}pull_request_target:\n {4}types: \[labeled\]/);
    expect(workflow).toMatch(/\npermissions: \{\}\n/);
    expect(agent).toMatch(/permissions:\n {6}contents: read\n {4}steps:/);
    expect(apply).toMatch(/permissions:\n {6}contents: write\n {6}pull-requests: write\n {4}steps:/);
    // The key reaches one step of the agent job, and nothing of the apply job.
    expect(workflow.match(/secrets\.\w+/g)).toEqual(["secrets.ANTHROPIC_API_KEY"]);
    expect(agent).toContain("secrets.ANTHROPIC_API_KEY");
    expect(apply).not.toMatch(/secrets\.|ANTHROPIC/);
    expect(step("agent")).toMatch(/--full-auto --dir pr .*--output-patch "\$RUNNER_TEMP\/handoff\/agent\.patch"/s);
    const code = (text: string) =>
      text
        .split("\n")
        .filter((l) => !l.trim().startsWith("#"))
        .join("\n");
    expect(code(agent).match(/persist-credentials: false/g)).toHaveLength(2);
    expect(code(apply).match(/persist-credentials: false/g)).toHaveLength(1);
    // The apply job runs nothing from the checkout: no install, build, test or script of it; git with hooks off.
    expect(code(apply)).not.toMatch(
      /\bnpm\b|\bnpx\b|\bmake\b|\byarn\b|\bpnpm\b|node_modules|\.\/|setup-node|bash pr|sh pr/,
    );
    const commands = code(apply)
      .split("\n")
      .filter((l) => !/^\s*- name:/.test(l))
      .join("\n");
    for (const call of commands.matchAll(/\bgit (-c \S+ )*(apply|commit|push)/g))
      expect(call[0]).toContain("core.hooksPath=/dev/null");
    expect(step("apply")).toContain("commit --no-verify");
    for (const uses of workflow.matchAll(/uses: (\S+)/g)) expect(uses[1]).toMatch(/@v\d+\.\d+\.\d+$/);
    expect(code(workflow)).not.toMatch(/npx oc-exec|npm install oc-exec/);
  });

  it("the apply step with an empty patch: nothing to do, exit 0", async () => {
    const origin = mkdtempSync(join(e2e.home.root, "origin-"));
    git(origin, "init", "-q");
    writeFileSync(join(origin, "a.txt"), "a\n");
    git(origin, "add", ".");
    git(origin, "commit", "-q", "-m", "base");
    const root = checkout(origin);
    const temp = mkdtempSync(join(e2e.home.root, "runner-temp-"));
    mkdirSync(join(temp, "handoff"));
    writeFileSync(join(temp, "handoff", "agent.patch"), "");
    const summary = join(temp, "summary.md");
    const run = await runStep(step("apply"), root, {
      ...neutral,
      RUNNER_TEMP: temp,
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_OUTPUT: join(temp, "output"),
      PR_NUMBER: "7",
      BASE_SHA: git(join(root, "pr"), "rev-parse", "HEAD").trim(),
      MAY_EDIT_WORKFLOWS: "false",
    });
    expect(run.code).toBe(0);
    expect(readFileSync(summary, "utf8")).toBe("The agent changed nothing.\n");
    expect(existsSync(join(temp, "output"))).toBe(false);
  });

  it.skipIf(skip)(
    "its agent step, then its apply step, as written: the patch refused for touching .github/ without the label, applied and committed with it",
    async () => {
      const repo = mkdtempSync(join(e2e.home.root, "base-"));
      const pr = join(repo, "pr");
      mkdirSync(pr);
      git(pr, "init", "-q");
      writeFileSync(join(pr, "index.js"), "module.exports = (a, b) => a - b; // add\n");
      writeFileSync(join(pr, "old.txt"), "old\n");
      git(pr, "add", ".");
      git(pr, "commit", "-q", "-m", "the pull request");
      const origin = mkdtempSync(join(e2e.home.root, "origin-"));
      git(origin, "clone", "-q", "--bare", pr, "pr.git");
      installShim(repo);
      const temp = mkdtempSync(join(e2e.home.root, "runner-temp-"));
      const { prompt } = attackPrompt(
        [
          "set -e",
          "echo 'module.exports = (a, b) => a + b;' > index.js",
          "rm old.txt",
          "mkdir -p .github/workflows && printf 'on: push\\n' > .github/workflows/agent.yml",
          "printf 'x\\000y' > data.bin",
          "echo hooked > .git/description",
        ].join("\n"),
        "Fixed.",
      );
      const summary = join(temp, "summary.md");
      const agentRun = await runStep(step("agent"), repo, {
        ...e2e.home.env,
        OPENCODE_CONFIG_CONTENT: providerConfig(e2e.server.url, "anthropic", "claude-sonnet-4-5"),
        ANTHROPIC_API_KEY: "sk-ant-scripted",
        AGENT_TASK: prompt,
        RUNNER_TEMP: temp,
        GITHUB_STEP_SUMMARY: summary,
      });
      expect(agentRun.code).toBe(0);
      expect(readFileSync(summary, "utf8")).toBe("success: 4 file(s) changed\n");
      const events = checkStream(readFileSync(join(temp, "handoff", "agent.jsonl"), "utf8"));
      expect(events[0]).toMatchObject({ type: "run.started", sandbox: { mode: "workspace-write" } });
      expect(events.at(-1)).toMatchObject({
        type: "result",
        class: "success",
        output_patch: { path: join(temp, "handoff", "agent.patch"), files: 4 },
      });

      const applyEnv = (label: boolean, root: string) => ({
        ...neutral,
        RUNNER_TEMP: temp,
        GITHUB_STEP_SUMMARY: summary,
        GITHUB_OUTPUT: join(root, "output"),
        PR_NUMBER: "7",
        // The pull request's commit is the base's: it changes nothing itself here.
        BASE_SHA: git(join(root, "pr"), "rev-parse", "HEAD").trim(),
        MAY_EDIT_WORKFLOWS: String(label),
      });
      const refused = checkout(join(origin, "pr.git"));
      const without = await runStep(step("apply"), refused, applyEnv(false, refused));
      expect(without.code).toBe(1);
      expect(without.stderr).toContain("The patch changes .github/ (workflows): refused without the label");
      expect(git(join(refused, "pr"), "status", "--porcelain")).toBe("");

      const allowed = checkout(join(origin, "pr.git"));
      const withLabel = await runStep(step("apply"), allowed, applyEnv(true, allowed));
      expect(withLabel.code).toBe(0);
      expect(readFileSync(join(allowed, "output"), "utf8")).toBe("applied=true\n");
      const applied = join(allowed, "pr");
      expect(git(applied, "log", "-1", "--format=%an %s")).toBe("agent-patch[bot] Agent patch for #7\n");
      expect(git(applied, "status", "--porcelain")).toBe("");
      expect(git(applied, "show", "--name-status", "--format=", "HEAD").split("\n").sort()).toEqual(
        ["", "A\t.github/workflows/agent.yml", "A\tdata.bin", "D\told.txt", "M\tindex.js"].sort(),
      );
      expect(readFileSync(join(applied, "index.js"), "utf8")).toBe("module.exports = (a, b) => a + b;\n");
      expect(readFileSync(join(applied, "data.bin"))).toEqual(Buffer.from("x\0y", "latin1"));
      expect(readFileSync(join(applied, ".git", "description"), "utf8")).not.toContain("hooked");
    },
    180_000,
  );

  it.skipIf(skip)(
    "its agent step when oc-exec writes no patch (sparse files past the limit): exit 1 and `no patch`, never `0 file(s) changed`",
    async () => {
      // Before, the step said `success: 0 file(s) changed` and ended 0, and the apply step, finding
      // no patch, said "The agent changed nothing."
      const repo = mkdtempSync(join(e2e.home.root, "base-"));
      const pr = join(repo, "pr");
      mkdirSync(pr);
      git(pr, "init", "-q");
      writeFileSync(join(pr, "index.js"), "module.exports = (a, b) => a - b; // add\n");
      git(pr, "add", ".");
      git(pr, "commit", "-q", "-m", "the pull request");
      installShim(repo);
      const temp = mkdtempSync(join(e2e.home.root, "runner-temp-"));
      const { prompt } = attackPrompt(
        "echo 'module.exports = (a, b) => a + b;' > index.js && truncate -s 1900M big.bin",
        "Fixed.",
      );
      const summary = join(temp, "summary.md");
      try {
        const agentRun = await runStep(step("agent"), repo, {
          ...e2e.home.env,
          OPENCODE_CONFIG_CONTENT: providerConfig(e2e.server.url, "anthropic", "claude-sonnet-4-5"),
          ANTHROPIC_API_KEY: "sk-ant-scripted",
          AGENT_TASK: prompt,
          RUNNER_TEMP: temp,
          GITHUB_STEP_SUMMARY: summary,
        });
        expect(agentRun.code).toBe(1);
        expect(agentRun.stderr).toContain("oc-exec wrote no patch: see its output_patch_failed warning");
        expect(readFileSync(summary, "utf8")).toBe("success: no patch\n");
        expect(existsSync(join(temp, "handoff", "agent.patch"))).toBe(false);
      } finally {
        rmSync(join(pr, "big.bin"), { force: true });
      }
    },
    180_000,
  );
});
