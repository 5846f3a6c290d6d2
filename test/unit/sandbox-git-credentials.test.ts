// The token actions/checkout leaves in .git/config: which values the sandbox replaces with
// stand-ins (group 1 of the library's extract pattern), and where the config file is.
import { describe, expect, it } from "vitest";
import { GIT_CREDENTIAL, gitConfigCredentials } from "../../src/hosts/sandbox/git-credentials.js";

const CONFIG = [
  "[core]",
  "\trepositoryformatversion = 0",
  '[remote "origin"]',
  "\turl = https://x-access-token:ghs_abc@github.com/o/r",
  '[remote "upstream"]',
  "\turl = https://github.com/o/r",
  '[http "https://github.com/"]',
  "\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYw==",
  '[includeIf "gitdir:/w/r/.git"]',
  "\tpath = /runner/_temp/git-credentials-1.config",
  "",
].join("\n");

describe("the repository's credentials", () => {
  it("the pattern's group 1 is the header's credential and a URL's userinfo, nothing else", () => {
    const captured = [...CONFIG.matchAll(new RegExp(GIT_CREDENTIAL, "gd"))].map((m) => m[1]);
    expect(captured).toEqual(["x-access-token:ghs_abc", "eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYw=="]);
    expect(new RegExp(GIT_CREDENTIAL).test('[remote "o"]\n\turl = git@github.com:o/r.git\n')).toBe(false);
  });

  it("finds the config above the workspace, or a worktree's common one; with what it includes", () => {
    const files: Record<string, string> = {
      "/w/r/.git/config": CONFIG,
      "/w/wt/.git": "gitdir: /w/r/.git/worktrees/wt\n",
      "/w/r/.git/worktrees/wt/commondir": "../..\n",
    };
    const read = (p: string) => files[p] ?? null;
    const isDir = (p: string) => p === "/w/r/.git";
    const found = { file: "/w/r/.git/config", includes: ["/runner/_temp/git-credentials-1.config"] };
    expect(gitConfigCredentials("/w/r/src", read, isDir)).toEqual(found);
    expect(gitConfigCredentials("/w/wt", read, isDir)).toEqual(found);
    expect(gitConfigCredentials("/elsewhere", read, isDir)).toBeNull();
    files["/w/r/.git/config"] = "[core]\n\tbare = false\n";
    expect(gitConfigCredentials("/w/r", read, isDir)).toBeNull();
  });
});
