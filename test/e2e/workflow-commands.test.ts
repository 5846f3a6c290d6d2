// The job log under GitHub Actions, attacked for real: the real opencode under --sandbox
// workspace-write, the scripted model playing a prompt-injected agent (attackPrompt) that picks the
// names oc-exec reports (a link leading out, opencode configuration, a command). The runner reads
// every line of a step's stdout and stderr that starts with `::` (after spaces) as a workflow
// command: `::stop-commands::` hides oc-exec's own annotations that follow, `::add-mask::` hides
// text of the log, `::error` forges an annotation. Before the fix, oc-exec's human lines printed
// these names as they were: the run below gave four command lines on stderr, oc-exec's two and the
// agent's `::stop-commands::PWNED` and `::error title=forged::all checks passed/.opencode/opencode.json`.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { attackPrompt } from "../support/escape.js";
import { sandboxSkip } from "../support/sandbox-skip.js";

const e2e = useE2E();
const { skip } = await sandboxSkip("workflow command tests (test/e2e/workflow-commands.test.ts)");

/** The lines GitHub's runner reads as workflow commands: it splits at \n and \r, and trims the start. */
const commandLines = (log: string) => log.split(/\r\n|\r|\n/).filter((line) => line.trimStart().startsWith("::"));

describe.skipIf(skip)("names the agent chooses, in the job log under GitHub Actions", () => {
  it("a link and opencode configuration named with line breaks and `::` commands: oc-exec's own annotations are the log's only commands", async () => {
    const script = [
      // A terminal's escape (a window title) in the command the tool line shows.
      ": '\u001b]0;pwned\u0007'",
      `ln -s /etc/hostname "$(printf 'a\\n::stop-commands::PWNED\\nb')"`,
      `d="$(printf 'c\\r::error title=forged::all checks passed')" && mkdir -p "$d/.opencode" && echo '{}' > "$d/.opencode/opencode.json"`,
      "echo planted",
    ].join("\n");
    const workspace = e2e.workspace();
    const summary = join(e2e.home.root, "step-summary.md");
    writeFileSync(summary, "");
    const run = await e2e.run(["--sandbox", "workspace-write", "--auto", attackPrompt(script).prompt], {
      cwd: workspace,
      extraEnv: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary },
    });
    expect(run.code, run.stderr).toBe(0);
    const link = "a\n::stop-commands::PWNED\nb";
    const config = "c\r::error title=forged::all checks passed/.opencode/opencode.json";
    // The stream keeps the names as they are: JSON escapes them.
    expect(run.result.sandbox?.opencode_config_changed).toEqual([config]);
    expect(run.events.filter((e) => e.type === "warning").map((e) => e.type === "warning" && e.code)).toEqual([
      "sandbox_outside_link",
      "sandbox_opencode_config",
    ]);
    expect(commandLines(run.stdout)).toEqual([]);
    // stderr: oc-exec's two annotations, their data escaped as GitHub reads it, and nothing else.
    expect(commandLines(run.stderr)).toEqual([
      "::warning title=oc-exec sandbox_outside_link::the turn left links that lead out of the workspace: a%0A::stop-commands::PWNED%0Ab -> /etc/hostname; removed, since a later step that follows links (zip -r, an artifact upload, a cache) would read what the sandbox hid",
      "::warning title=oc-exec sandbox_opencode_config::the turn created or changed opencode's configuration in the workspace: c%0D::error title=forged::all checks passed/.opencode/opencode.json; the next opencode started there reads it, outside any sandbox too: review it, or discard the workspace",
    ]);
    // The human lines show the names escaped, on one line each.
    expect(run.stderr).toContain(
      "warning [sandbox_outside_link]: the turn left links that lead out of the workspace: a\\n::stop-commands::PWNED\\nb -> /etc/hostname; removed,",
    );
    expect(run.stderr).toContain(
      "warning [sandbox_opencode_config]: the turn created or changed opencode's configuration in the workspace: c\\u000d::error title=forged::all checks passed/.opencode/opencode.json;",
    );
    expect(run.stderr).toContain("✓ bash  : '\\u001b]0;pwned\\u0007'");
    expect(run.stderr).not.toContain("\u001b");
    expect(readFileSync(summary, "utf8")).toContain("| files changed | none |");
    // The link itself is gone (it led out of the workspace), whatever its name.
    expect(existsSync(join(workspace, link))).toBe(false);
  }, 90_000);

  it("a link at --junit's path whose target holds a line break: the refusal names it on one line", async () => {
    const script = `ln -s "$(printf 'x\\n::stop-commands::J')" report.xml && echo planted`;
    const run = await e2e.run(
      ["--sandbox", "workspace-write", "--auto", "--junit", "report.xml", attackPrompt(script).prompt],
      {
        cwd: e2e.workspace(),
        extraEnv: { GITHUB_ACTIONS: "true" },
      },
    );
    expect(run.code).toBe(5);
    expect(commandLines(run.stderr)).toEqual([]);
    expect(run.stderr).toContain("(to x\\n::stop-commands::J)");
  }, 90_000);
});
