// What a sandboxed turn changed where git does not look (src/engine/workspace/hidden-changes.ts):
// the walk's collector by change time, and what of it the turn's report did not show.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { changedSinceCollector, hiddenChanges } from "../../src/engine/workspace/hidden-changes.js";
import { walkWorkspace } from "../../src/engine/workspace/tree-walk.js";

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function tree() {
  root = mkdtempSync(join(tmpdir(), "oc-exec-hidden-"));
  mkdirSync(join(root, "node_modules", ".bin"), { recursive: true });
  writeFileSync(join(root, "node_modules", ".bin", "jest"), "#!/bin/sh\n");
  symlinkSync("../outside", join(root, "link"));
  return root;
}

const collect = (dir: string, since: number) => {
  const collector = changedSinceCollector(since, [".mcp.json", ".git"]);
  walkWorkspace(dir, (path, entry) => collector.visit(dir, path, entry));
  return collector.found.sort();
};

describe("the files a turn changed, by change time", () => {
  it("files and links changed since the turn began; directories never", () => {
    const dir = tree();
    expect(collect(dir, Date.now() - 60_000)).toEqual(["link", "node_modules/.bin/jest"]);
  });

  it("an empty file at a sandbox mount point is the sandbox's; one with content is the turn's", () => {
    const dir = tree();
    writeFileSync(join(dir, ".git"), "");
    writeFileSync(join(dir, ".mcp.json"), '{"mcpServers":{}}');
    expect(collect(dir, Date.now() - 60_000)).toEqual([".mcp.json", "link", "node_modules/.bin/jest"]);
  });

  it("nothing written after the time given", () => {
    const dir = tree();
    expect(collect(dir, Date.now() + 60_000)).toEqual([]);
  });
});

describe("what the report did not show", () => {
  it("the changed paths neither reported nor skipped, sorted", () => {
    expect(
      hiddenChanges(
        ["node_modules/b.js", "src/a.ts", ".mcp.json", "node_modules/a.js", "out.patch"],
        ["src/a.ts"],
        [".mcp.json", "out.patch"],
      ),
    ).toEqual(["node_modules/a.js", "node_modules/b.js"]);
  });

  it("nothing changed: nothing hidden", () => {
    expect(hiddenChanges([], ["src/a.ts"], [])).toEqual([]);
  });
});
