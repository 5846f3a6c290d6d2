// What a sandboxed turn changed where git does not look (src/engine/workspace/hidden-changes.ts):
// the walk's collector by change time, and what of it the turn's report did not show.
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { changedSinceCollector, dirInodeCollector, hiddenChanges } from "../../src/engine/workspace/hidden-changes.js";
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

describe("directories the turn put in place", () => {
  // The turn starts once the clock has passed the tree's making by more than the collector's slack
  // for coarse file times (20 ms): what was there is older than it, what the turn writes is not.
  const around = (dir: string, turn: () => void) => {
    const before = dirInodeCollector();
    walkWorkspace(dir, (path, entry) => before.visit(dir, path, entry));
    const since = Date.now() + 40;
    while (Date.now() < since) {
      // the clock, not an event: file times are what is tested
    }
    turn();
    const after = changedSinceCollector(since, [], before.found);
    walkWorkspace(dir, (path, entry) => after.visit(dir, path, entry));
    return after.movedIn;
  };

  it("one moved over another: each older entry under it, under the topmost directory moved", () => {
    const dir = tree();
    mkdirSync(join(dir, "dist", "bin", "lib"), { recursive: true });
    writeFileSync(join(dir, "dist", "bin", "jest"), "evil");
    writeFileSync(join(dir, "dist", "bin", "lib", "x.js"), "evil");
    const moved = around(dir, () => {
      rmSync(join(dir, "node_modules", ".bin"), { recursive: true });
      renameSync(join(dir, "dist", "bin"), join(dir, "node_modules", ".bin"));
    });
    expect(moved.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: "node_modules/.bin/jest", dir: "node_modules/.bin" },
      { path: "node_modules/.bin/lib/x.js", dir: "node_modules/.bin" },
    ]);
    expect(hiddenChanges([], [], [], moved)).toEqual(["node_modules/.bin/"]);
  });

  it("the same directories as before, or new ones holding only new files: none", () => {
    const dir = tree();
    expect(around(dir, () => undefined)).toEqual([]);
    expect(
      around(dir, () => {
        mkdirSync(join(dir, "node_modules", "pkg"));
        writeFileSync(join(dir, "node_modules", "pkg", "index.js"), "new");
        // A time set back is the modification time: what is compared is the change time.
        utimesSync(join(dir, "node_modules", "pkg", "index.js"), 0, 0);
      }),
    ).toEqual([]);
  });

  it("a renamed directory whose files the report shows (git lists a tracked directory renamed): not hidden", () => {
    const moved = [{ path: "src/lib2/a.ts", dir: "src/lib2" }];
    expect(hiddenChanges([], ["src/lib2/a.ts"], [], moved)).toEqual([]);
    expect(hiddenChanges([], [], [], moved)).toEqual(["src/lib2/"]);
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
