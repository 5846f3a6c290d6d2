import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderHelp } from "../../src/cli/program.js";

describe("--help", () => {
  it("the pre-rendered dist/cli/help.txt is what commander prints", () => {
    expect(readFileSync(new URL("../../dist/cli/help.txt", import.meta.url), "utf8")).toBe(renderHelp());
  });

  it("groups the options and teaches: examples, jq, a CI step, exit codes", () => {
    const help = renderHelp();
    for (const heading of [
      "Model and agent:",
      "Workspace, session and prompt:",
      "Limits:",
      "Output:",
      "Examples:",
      "Exit codes:",
    ])
      expect(help).toContain(heading);
    expect(help).toContain("jq -r 'select(.type==\"result\") | .text'");
    expect(help).toContain("|| status=$?");
    expect(help).toContain("case $status in");
    // What the agent may do when no policy is given, said where a new user looks first.
    expect(help).toContain("with no --allow/--deny, opencode's own defaults apply");
  });
});
