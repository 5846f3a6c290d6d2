// opencode's configuration a turn changed, read from the disk: what git's listing would miss.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { opencodeConfigChangedSince, opencodeConfigIn } from "../../src/engine/workspace/opencode-config.js";

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

function workspace(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), "oc-config-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("opencodeConfigChangedSince", () => {
  it("names the configuration made, changed (same size) and removed, whatever a .gitignore says; nothing else", () => {
    const dir = workspace({
      ".gitignore": "opencode.json\n.opencode/\n",
      "a/opencode.jsonc": "{}",
      "b/.opencode/agent/x.md": "old",
      "c/.opencode/command/y.md": "gone",
      "src/main.ts": "",
      ".git/opencode.json": "{}",
    });
    const before = opencodeConfigIn(dir);
    expect([...before.keys()].sort()).toEqual([
      "a/opencode.jsonc",
      "b/.opencode/agent/x.md",
      "c/.opencode/command/y.md",
    ]);
    writeFileSync(join(dir, "opencode.json"), '{"mcp":{}}');
    writeFileSync(join(dir, "b/.opencode/agent/x.md"), "new");
    rmSync(join(dir, "c/.opencode/command/y.md"));
    mkdirSync(join(dir, "d"));
    symlinkSync("../b/.opencode", join(dir, "d/.opencode"));
    writeFileSync(join(dir, "src/main.ts"), "changed");
    writeFileSync(join(dir, ".git/opencode.json"), "changed");
    expect(opencodeConfigChangedSince(dir, before)).toEqual([
      "b/.opencode/agent/x.md",
      "c/.opencode/command/y.md",
      "d/.opencode",
      "opencode.json",
    ]);
  });

  it("names nothing when the turn left the configuration as it was", () => {
    const dir = workspace({ "opencode.json": "{}", ".opencode/.gitignore": "node_modules\n" });
    expect(opencodeConfigChangedSince(dir, opencodeConfigIn(dir))).toEqual([]);
  });
});
