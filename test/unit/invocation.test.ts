import { describe, expect, it } from "vitest";
import { buildEnv, buildInvocation, titleFor } from "../../src/domain/opencode/invocation.js";

const base = {
  binary: "/bin/opencode",
  workspace: "/work/repo",
  prompt: "Review this diff\nmore",
  title: null,
  model: null,
  agent: null,
  variant: null,
  thinking: false,
  session: null,
  files: [],
  pure: false,
  baseEnv: { PATH: "/usr/bin", HOME: "/home/u", OPENCODE_AUTO_SHARE: "true", UNSET: undefined },
};

describe("buildInvocation", () => {
  it("always runs json format in the absolute workspace, with a title and error logs, prompt on stdin", () => {
    const inv = buildInvocation(base);
    expect(inv.file).toBe("/bin/opencode");
    expect(inv.args).toEqual([
      "run",
      "--format",
      "json",
      "--dir",
      "/work/repo",
      "--title",
      "Review this diff",
      "--print-logs",
      "--log-level",
      "INFO",
    ]);
    expect(inv.input).toBe("Review this diff\nmore");
  });

  it("passes every option through, flag by flag, and never the prompt as an argument", () => {
    const inv = buildInvocation({
      ...base,
      title: "T",
      model: "anthropic/claude-sonnet-4-5",
      agent: "plan",
      variant: "high",
      thinking: true,
      session: "ses_1",
      files: ["/a b.txt", "/c.txt"],
      pure: true,
    });
    expect(inv.args).toEqual([
      "run",
      "--format",
      "json",
      "--dir",
      "/work/repo",
      "--title",
      "T",
      "--print-logs",
      "--log-level",
      "INFO",
      "--model",
      "anthropic/claude-sonnet-4-5",
      "--agent",
      "plan",
      "--variant",
      "high",
      "--thinking",
      "--session",
      "ses_1",
      "--pure",
      "--file",
      "/a b.txt",
      "--file",
      "/c.txt",
    ]);
    expect(inv.args).not.toContain(base.prompt);
  });

  it("sets the managed environment over inherited values and drops undefined", () => {
    const env = buildEnv(base.baseEnv);
    expect(env).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/u",
      OPENCODE_AUTO_SHARE: "false",
      OPENCODE_DISABLE_AUTOUPDATE: "true",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "true",
    });
  });

  it("titles come from the first line, shortened", () => {
    expect(titleFor("  \n")).toBe("oc-exec turn");
    expect(titleFor("x".repeat(100))).toBe(`${"x".repeat(59)}…`);
  });
});
