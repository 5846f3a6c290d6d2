// What changed in the workspace during a turn, whoever changed it (issue: --fail-on no-changes
// failed a turn whose edit was made by a command). With the real opencode and a bash call that
// writes a file; a dirty file and the repository's own config are the traps.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { BIN, eventsOf, runBash } from "../support/run-cli.js";
import { checkStream } from "../support/schema-check.js";

const e2e = useE2E();
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd, stdio: "ignore" });

describe("result.workspace_changes", () => {
  it("in a git work tree: a command's write counts, a file dirty before the turn does not, and --fail-on no-changes passes", async () => {
    const workspace = e2e.workspace();
    git(workspace, "init", "-q");
    writeFileSync(join(workspace, "dirty.txt"), "committed\n");
    writeFileSync(join(workspace, ".gitignore"), "ignored.log\n");
    git(workspace, "add", ".");
    git(workspace, "commit", "-q", "-m", "start");
    writeFileSync(join(workspace, "dirty.txt"), "dirty before the turn\n");
    // A config the agent could have written: oc-exec's own git calls must not run it.
    const marker = join(e2e.home.root, "fsmonitor-ran");
    git(workspace, "config", "core.fsmonitor", `touch ${marker}`);
    const run = await e2e.run(["-q", "--dir", workspace, "--fail-on", "no-changes", "scenario:bash-write fix it"]);
    expect(run.code).toBe(0);
    expect(run.result.class).toBe("success");
    expect(run.result.workspace_changes).toEqual({ source: "git", files: [{ path: "fixed.txt", change: "added" }] });
    // files_changed keeps its meaning: the tools' own writes (bash is not one).
    expect(run.result.files_changed).toEqual([]);
    expect(eventsOf(run, "tool").map((t) => t.tool)).toEqual(["bash"]);
    expect(existsSync(marker)).toBe(false);
  });

  it("outside a git work tree: the tools' writes, said so; --fail-on no-changes then fails a command's write as before", async () => {
    const workspace = e2e.workspace();
    const run = await e2e.run(["-q", "--dir", workspace, "--fail-on", "no-changes", "scenario:bash-write fix it"]);
    expect(run.code).toBe(1);
    expect(run.result.workspace_changes).toEqual({ source: "tools", files: [] });
    expect(run.result.error?.message).toBe("--fail-on no-changes: no file changed");
  });
});

describe("oc-exec's own files are never the agent's work", () => {
  it("stdout's file, -o and --junit inside the repository: --fail-on no-changes fails a turn that changed nothing (the README's example)", async () => {
    const workspace = e2e.workspace();
    git(workspace, "init", "-q");
    writeFileSync(join(workspace, "a.txt"), "a\n");
    git(workspace, "add", ".");
    git(workspace, "commit", "-q", "-m", "start");
    const run = await runBash(
      ["-euo", "pipefail"],
      `status=0; "${process.execPath}" "${BIN}" -q --fail-on tool-error,no-changes -o answer.md --junit report.xml "scenario:plain hi" > events.jsonl || status=$?; echo "exit $status"`,
      { cwd: workspace, env: e2e.home.env },
    );
    expect(run.stdout).toBe("exit 1\n");
    const events = checkStream(readFileSync(join(workspace, "events.jsonl"), "utf8"));
    const result = events.at(-1);
    expect(result).toMatchObject({ type: "result", class: "agent_error" });
    expect(result?.type === "result" && result.workspace_changes).toEqual({ source: "git", files: [] });
    expect(readFileSync(join(workspace, "answer.md"), "utf8")).toBe("Hello from the scripted model.");
  });
});
