// The release flow (issue "A CI author's first hour", item 9): the workflow publishes with provenance
// from a tag after the same CI as every commit, its tag check runs as written, and the README's links
// into docs/ resolve inside the published package (they are relative: the docs ship with it).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { workflowStep } from "../support/workflow-step.js";

const root = new URL("../../", import.meta.url).pathname;
const workflow = readFileSync(join(root, "docs/github-actions-release.yml"), "utf8");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string; files: string[] };

const step = (name: string) => workflowStep(workflow, name);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function checkTag(tag: string, changesets: string[]) {
  const dir = mkdtempSync(join(tmpdir(), "oc-exec-release-"));
  dirs.push(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "oc-exec", version: "1.4.0" }));
  mkdirSync(join(dir, ".changeset"));
  writeFileSync(join(dir, ".changeset", "README.md"), "how to add one\n");
  for (const c of changesets) writeFileSync(join(dir, ".changeset", c), '---\n"oc-exec": patch\n---\n\nx\n');
  return spawnSync("bash", ["-e", "-c", step("check-tag")], {
    cwd: dir,
    env: { PATH: process.env.PATH!, GITHUB_REF_NAME: tag },
    encoding: "utf8",
  });
}

describe("docs/github-actions-release.yml", () => {
  it("publishes from a version tag, with provenance, after .ci/run; the token only in the publish step", () => {
    expect(workflow).toMatch(/on:\n {2}push:\n {4}tags: \["v\*"\]/);
    expect(workflow).toContain("id-token: write");
    expect(workflow).toContain("run: bash .ci/run");
    expect(workflow).toContain("run: npm publish --provenance --access public");
    expect(workflow.match(/secrets\.NPM_TOKEN/g)).toHaveLength(1);
    for (const uses of workflow.matchAll(/uses: (\S+)/g)) expect(uses[1]).toMatch(/@v\d+\.\d+\.\d+$/);
  });

  it("its tag check passes for the tag of package.json's version, and fails on another tag or a pending changeset", () => {
    expect(checkTag("v1.4.0", []).status).toBe(0);
    const wrong = checkTag("v1.3.9", []);
    expect(wrong.status).toBe(1);
    expect(wrong.stdout).toContain("::error::tag v1.3.9 does not name package.json's version 1.4.0");
    const pending = checkTag("v1.4.0", ["brave-owls-dance.md"]);
    expect(pending.status).toBe(1);
    expect(pending.stdout).toContain("::error::unreleased changesets remain in .changeset/");
  });

  it("every pending changeset has the front matter changesets reads (a formatter must not touch them)", () => {
    const dir = join(root, ".changeset");
    const pending = readdirSync(dir).filter((f) => f.endsWith(".md") && f !== "README.md");
    for (const file of pending)
      expect(readFileSync(join(dir, file), "utf8"), file).toMatch(/^---\n"oc-exec": (major|minor|patch)\n---\n\n\S/);
  });

  it("the changesets config and scripts are there, and the CHANGELOG is theirs to write", () => {
    expect(existsSync(join(root, ".changeset/config.json"))).toBe(true);
    const scripts = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts as Record<string, string>;
    expect(scripts["release:version"]).toBe("changeset version");
  });
});

describe("the README's links into docs/ work from node_modules", () => {
  it("every relative link names a file that the package ships", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const links = [...readme.matchAll(/\]\(((?!https?:|#)[^)#\s]+)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(5);
    for (const link of links) {
      expect(existsSync(join(root, link)), link).toBe(true);
      expect(
        // npm ships package.json, README and LICENSE whatever `files` says.
        ["LICENSE", "README.md", ...pkg.files].some((f) => link === f || link.startsWith(`${f}/`)),
        `${link} is not in package.json files`,
      ).toBe(true);
    }
  });
});
