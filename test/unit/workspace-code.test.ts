// Which files make opencode load code from a workspace into its process (src/hosts/sandbox/workspace-code.ts),
// as opencode 1.18.33 looks for them: up to the git repository's top, plugins and tools, config
// files that name plugins; the user's own directories left alone.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { projectConfigDisabled, workspaceCode, workspaceCodeProblem } from "../../src/hosts/sandbox/workspace-code.js";

let root = "";
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** A git repository with these files (path → content) and a sub directory; returns the repository's path. */
function repo(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), "oc-exec-wscode-"));
  const top = join(root, "repo");
  mkdirSync(join(top, ".git"), { recursive: true });
  mkdirSync(join(top, "sub"), { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(top, path)), { recursive: true });
    writeFileSync(join(top, path), content);
  }
  return top;
}

const env = (extra: Record<string, string> = {}) => ({ HOME: "/nonexistent-home", ...extra });

describe("workspaceCode", () => {
  it.each([
    [".opencode/plugin/steal.js", "export const A = 1;"],
    [".opencode/plugins/.hidden.ts", "export const A = 1;"],
    [".opencode/tool/helper.js", "export default {};"],
    [".opencode/tools/helper.ts", "export default {};"],
    ["opencode.json", '{"plugin": ["./evil.js"]}'],
    ["opencode.jsonc", '// mine\n{"plugin": ["evil-package"],}'],
    [".opencode/opencode.json", '{"plugin": ["file:///x.js"]}'],
    ["sub/.opencode/plugin/steal.js", "export const A = 1;"],
  ])("%s is found from the repository's top and from sub/ when it lies on the way", (path, content) => {
    const top = repo({ [path]: content });
    const inSub = path.startsWith("sub/");
    expect(workspaceCode(top, env())).toEqual(inSub ? [] : [join(top, path)]);
    expect(workspaceCode(join(top, "sub"), env())).toEqual([join(top, path)]);
  });

  it.each([
    [".opencode/plugin/readme.md", "not code"],
    [".opencode/agent/review.md", "an agent is text"],
    ["opencode.json", '{"plugin": []}'],
    ["opencode.json", '{"model": "fake/fake-model"}'],
    [".opencode/plugin/deeper/steal.js", "not at the glob's depth"],
  ])("%s (%s) is no code opencode loads", (path, content) => {
    expect(workspaceCode(repo({ [path]: content }), env())).toEqual([]);
  });

  it("stops at the repository's top; outside a repository it goes up to /", () => {
    const top = repo({});
    mkdirSync(join(root, ".opencode", "plugin"), { recursive: true });
    writeFileSync(join(root, ".opencode", "plugin", "above.js"), "");
    expect(workspaceCode(top, env())).toEqual([]);
    rmSync(join(top, ".git"), { recursive: true });
    expect(workspaceCode(join(top, "sub"), env())).toEqual([join(root, ".opencode", "plugin", "above.js")]);
  });

  it("the user's own .opencode and OPENCODE_CONFIG_DIR are the user's, not the workspace's", () => {
    const top = repo({ ".opencode/plugin/mine.js": "" });
    rmSync(join(top, ".git"), { recursive: true });
    expect(workspaceCode(top, env({ HOME: top }))).toEqual([]);
    expect(workspaceCode(top, env({ OPENCODE_CONFIG_DIR: join(top, ".opencode") }))).toEqual([]);
  });

  it("the problem names every file, and the ways out", () => {
    const top = repo({ ".opencode/plugin/a.js": "", "opencode.json": '{"plugin":["x"]}' });
    expect(workspaceCodeProblem(top, env(), "cannot serve")).toBe(
      `cannot serve: the workspace ships code that opencode would load into the server's own process, where the server's password cannot be kept from it (${join(top, "opencode.json")}, ${join(top, ".opencode", "plugin", "a.js")}); remove it, run single sandboxed turns instead of a server, or set OPENCODE_DISABLE_PROJECT_CONFIG=1 to start the server without the workspace's opencode configuration`,
    );
    expect(workspaceCodeProblem(join(top, "sub"), env(), "x")).not.toBeNull();
  });
});

describe("projectConfigDisabled, as opencode reads the flag", () => {
  it.each([
    ["1", true],
    ["true", true],
    ["TRUE", true],
    ["yes", false],
    ["0", false],
    ["", false],
  ])("%j → %s", (value, disabled) => {
    expect(projectConfigDisabled({ OPENCODE_DISABLE_PROJECT_CONFIG: value })).toBe(disabled);
  });
});
