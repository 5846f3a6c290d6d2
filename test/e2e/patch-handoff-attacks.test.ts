// Attacks on the --output-patch hand-off: a prompt-injected agent shapes the patch so that the
// documented apply step (docs/github-actions-pr-patch.yml, as written) writes outside the
// repository, into .git, or past its .github gate. The turn runs sandboxed for real, through the
// workflow's agent step; the apply step runs outside on a clean checkout, without the label
// agent-may-edit-workflows.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { providerConfig } from "../../src/domain/scripted/hermetic-home.js";
import { useE2E } from "../support/e2e.js";
import { attackPrompt } from "../support/escape.js";
import { neutralGit, neutralGitEnv } from "../support/git.js";
import { installShim, runBash } from "../support/run-cli.js";
import { sandboxSkip } from "../support/sandbox-skip.js";
import { workflowStep } from "../support/workflow-step.js";

const e2e = useE2E();
const workflow = readFileSync(new URL("../../docs/github-actions-pr-patch.yml", import.meta.url), "utf8");
const { skip } = await sandboxSkip("attack on the patch hand-off (needs the sandbox)");
const step = (name: string) => workflowStep(workflow, name);
const git = neutralGit;

/** A workflow step's script as GitHub Actions runs a step with no `shell:` (bash -e). */
const runStep = (script: string, cwd: string, env: NodeJS.ProcessEnv) => runBash(["-e"], script, { cwd, env });

/**
 * The agent job on a pull request (its own commit, on a base commit) and then the apply job. `prFiles`:
 * what the pull request's commit itself adds beside the base's files.
 */
async function agentTurn(
  script: string,
  applyScript = step("apply"),
  prFiles: Record<string, string> = {},
  applyEnv: NodeJS.ProcessEnv = {},
) {
  const repo = mkdtempSync(join(e2e.home.root, "base-"));
  const pr = join(repo, "pr");
  mkdirSync(pr);
  git(pr, "init", "-q");
  writeFileSync(join(pr, "index.js"), "module.exports = 1;\n");
  writeFileSync(join(pr, "run.sh"), "echo hi\n");
  git(pr, "add", ".");
  git(pr, "commit", "-q", "-m", "the base branch");
  const base = git(pr, "rev-parse", "HEAD").trim();
  for (const [path, text] of Object.entries(prFiles)) {
    mkdirSync(dirname(join(pr, path)), { recursive: true });
    writeFileSync(join(pr, path), text);
  }
  git(pr, "add", ".");
  git(pr, "commit", "-q", "--allow-empty", "-m", "the pull request");
  const origin = mkdtempSync(join(e2e.home.root, "origin-"));
  git(origin, "clone", "-q", "--bare", pr, "pr.git");
  installShim(repo);
  const temp = mkdtempSync(join(e2e.home.root, "runner-temp-"));
  const { prompt } = attackPrompt(script, "Fixed.");
  const run = await runStep(step("agent"), repo, {
    ...e2e.home.env,
    OPENCODE_CONFIG_CONTENT: providerConfig(e2e.server.url, "anthropic", "claude-sonnet-4-5"),
    ANTHROPIC_API_KEY: "sk-ant-scripted",
    AGENT_TASK: prompt,
    RUNNER_TEMP: temp,
    GITHUB_STEP_SUMMARY: join(temp, "summary.md"),
  });
  const patch = readFileSync(join(temp, "handoff", "agent.patch"));
  // The apply job: a clean checkout of the same commit, the apply step as written, no label.
  const root = mkdtempSync(join(e2e.home.root, "apply-"));
  git(root, "clone", "-q", join(origin, "pr.git"), "pr");
  const hooksBefore = readdirSync(join(root, "pr", ".git", "hooks")).sort();
  const configBefore = readFileSync(join(root, "pr", ".git", "config"), "utf8");
  const apply = await runStep(applyScript, root, {
    ...neutralGitEnv,
    RUNNER_TEMP: temp,
    GITHUB_STEP_SUMMARY: join(temp, "summary.md"),
    GITHUB_OUTPUT: join(root, "output"),
    PR_NUMBER: "7",
    BASE_SHA: base,
    MAY_EDIT_WORKFLOWS: "false",
    ...applyEnv,
  });
  const touched = existsSync(join(temp, "touched")) ? readFileSync(join(temp, "touched"), "latin1") : "";
  return { run, patch, root, apply, touched, hooksBefore, configBefore };
}

describe("the patch hand-off, attacked: what the apply job applies", () => {
  // The agent makes .github a link to a directory of workflows it wrote: the patch holds the
  // path `.github` (mode 120000), never `.github/...`, which a check for '^\.github/' lets through.
  const linkAttack = [
    "set -e",
    "mkdir -p ci/workflows && printf 'on: push\\njobs: {x: {runs-on: ubuntu-latest, steps: [{run: echo pwned}]}}\\n' > ci/workflows/evil.yml",
    "ln -s ci .github",
    "echo done",
  ].join("\n");

  it.skipIf(skip)(
    "without the check on .github itself, a patch that makes .github a link to the agent's workflows is applied and committed (the attack works)",
    async () => {
      const old = step("apply").replace("grep -qE '^\\.github(/|$)'", "grep -q '^\\.github/'");
      expect(old).not.toBe(step("apply"));
      const r = await agentTurn(linkAttack, old);
      expect(r.touched.split("\n")).toContain(".github");
      expect(r.apply.code, r.apply.stderr).toBe(0);
      const tree = git(join(r.root, "pr"), "ls-tree", "-r", "--format=%(objectmode) %(path)", "HEAD");
      expect(tree).toContain("120000 .github");
      expect(tree).toContain("100644 ci/workflows/evil.yml");
    },
    240_000,
  );

  it.skipIf(skip)(
    "with the apply step as documented, the same patch is refused without the label: exit 1, nothing applied",
    async () => {
      const r = await agentTurn(linkAttack);
      expect(r.touched.split("\n")).toContain(".github");
      expect(r.apply.code).toBe(1);
      expect(r.apply.stderr).toContain("The patch changes .github/ (workflows): refused without the label");
      const pr = join(r.root, "pr");
      expect(git(pr, "status", "--porcelain")).toBe("");
      expect(existsSync(join(pr, ".github"))).toBe(false);
      expect(readdirSync(join(pr, ".git", "hooks")).sort()).toEqual(r.hooksBefore);
      expect(readFileSync(join(pr, ".git", "config"), "utf8")).toBe(r.configBefore);
    },
    240_000,
  );

  // The pull request itself adds a workflow; the agent's patch is harmless. The apply job pushes the
  // pull request's commits with the patch to a branch of the base repository, where that workflow
  // runs with the repository's secrets once a pull request is opened from the branch.
  const prWorkflow = {
    ".github/workflows/evil.yml": "on: pull_request\njobs: {x: {runs-on: ubuntu-latest, steps: [{run: echo pwned}]}}\n",
  };
  const harmless = "echo 'module.exports = 2;' > index.js";
  const prGate = /\n *# The pull request's own commits are pushed too[\s\S]*?\n *fi\n/;

  it.skipIf(skip)(
    "without the gate on the pull request's own changes, its workflow is committed under the agent's patch, ready to push (the attack works)",
    async () => {
      const old = step("apply").replace(prGate, "\n");
      expect(old).not.toBe(step("apply"));
      const r = await agentTurn(harmless, old, prWorkflow);
      expect(r.touched).toBe("index.js\n");
      expect(r.apply.code, r.apply.stderr).toBe(0);
      const pushed = git(join(r.root, "pr"), "ls-tree", "-r", "--name-only", "HEAD");
      expect(pushed.split("\n")).toContain(".github/workflows/evil.yml");
      expect(git(join(r.root, "pr"), "log", "-1", "--format=%s")).toBe("Agent patch for #7\n");
    },
    240_000,
  );

  it.skipIf(skip)(
    "with the apply step as documented, a pull request that itself changes .github/ is refused without the label: exit 1, nothing committed",
    async () => {
      const r = await agentTurn(harmless, step("apply"), prWorkflow);
      expect(r.touched).toBe("index.js\n");
      expect(r.apply.code).toBe(1);
      expect(r.apply.stderr).toContain(
        "The pull request itself changes .github/ (workflows), and its commits would be pushed with the patch: refused without the label agent-may-edit-workflows.",
      );
      const pr = join(r.root, "pr");
      expect(git(pr, "status", "--porcelain")).toBe("");
      expect(git(pr, "log", "-1", "--format=%s")).toBe("the pull request\n");
    },
    240_000,
  );

  it.skipIf(skip)(
    "the gate fails closed: without the base commit to compare with, the step stops before applying anything",
    async () => {
      const r = await agentTurn(harmless, step("apply"), prWorkflow, { BASE_SHA: "" });
      expect(r.apply.code).not.toBe(0);
      expect(r.apply.stderr).not.toContain("The pull request itself changes");
      const pr = join(r.root, "pr");
      expect(git(pr, "status", "--porcelain")).toBe("");
      expect(git(pr, "log", "-1", "--format=%s")).toBe("the pull request\n");
    },
    240_000,
  );

  it.skipIf(skip)(
    "the rest applied: nothing outside the repository, nothing in .git, no .git variant, no setuid",
    async () => {
      const r = await agentTurn(
        [
          "ln -s ../../canary-out escape; mkdir -p real && ln -s ../.. real/up; ln -s /tmp abs",
          "mkdir -p $'a\\n.git/hooks' && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > $'a\\n.git/hooks/post-commit'",
          "printf x > $'t\\tab'; printf x > '\"q\"'; printf x > ./-rf; printf x > $'bad\\xff'",
          "mkdir -p .GIT/hooks && printf x > .GIT/hooks/post-commit",
          "mkdir -p sub/.Git && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > sub/.Git/config",
          "mkdir -p sub2/.git/hooks && printf x > sub2/.git/hooks/post-commit",
          "chmod 4755 run.sh || chmod 755 run.sh",
          "printf '* filter=canary diff=canary\\n' > .gitattributes",
          "rm index.js && mkdir index.js && printf 'x\\n' > index.js/inner",
          "echo done",
        ].join("\n"),
      );
      expect(r.apply.code).toBe(0);
      const pr = join(r.root, "pr");
      const tree = git(pr, "ls-tree", "-r", "--format=%(objectmode) %(path)", "HEAD");
      expect(tree).not.toMatch(/(^|\/)\.git\//im);
      expect(tree).not.toMatch(/120000/);
      expect(tree).toContain("100755 run.sh");
      expect(readdirSync(join(pr, ".git", "hooks")).sort()).toEqual(r.hooksBefore);
      expect(readFileSync(join(pr, ".git", "config"), "utf8")).toBe(r.configBefore);
      expect(existsSync(join(r.root, "canary-out"))).toBe(false);
      expect(existsSync("/tmp/pwned")).toBe(false);
      expect(lstatSync(join(pr, "run.sh")).mode & 0o4000).toBe(0);
    },
    240_000,
  );
});
