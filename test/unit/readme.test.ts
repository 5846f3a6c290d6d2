// The README is a front page: what a reader takes in within five minutes. Detail goes to docs/;
// features add lines there, not here.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("the README", () => {
  it("stays within 300 lines", () => {
    expect(readme.trimEnd().split("\n").length).toBeLessThanOrEqual(300);
  });

  it("says on its first screen what the agent may do by default, and the safe way for untrusted input", () => {
    const firstScreen = readme.slice(0, readme.indexOf("## Warm turns on a server"));
    expect(firstScreen).toContain("**What the agent may do by default:**");
    expect(firstScreen).toContain("--allow read,grep,glob,list");
    expect(readme).not.toContain("nothing is auto-approved unless you say so");
  });

  it("links only to docs that exist, with anchors that exist", () => {
    for (const [, file, anchor] of readme.matchAll(/\]\((docs\/[a-z-]+\.md)(?:#([a-z-]+))?\)/g)) {
      const doc = readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");
      if (!anchor) continue;
      const headings = [...doc.matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, "")
          .replaceAll(" ", "-"),
      );
      expect(headings, `${file}#${anchor}`).toContain(anchor);
    }
  });
});
