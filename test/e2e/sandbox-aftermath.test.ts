// What a sandboxed turn leaves behind, attacked for real: the real opencode under --sandbox
// workspace-write, the scripted model playing a prompt-injected agent (attackPrompt), then the step
// the CI job runs next. Each attack's working without the protection is shown in the unit tests of
// the old code path named beside it.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { attackPrompt } from "../support/escape.js";
import { runBash } from "../support/run-cli.js";
import { sandboxSkip } from "../support/sandbox-skip.js";

const e2e = useE2E();
const { skip } = await sandboxSkip("sandbox aftermath tests (test/e2e/sandbox-aftermath.test.ts)");

/** oc-exec's pid, as the agent finds it: its TMPDIR's name, else the oc-exec node process in /proc. */
const FIND_PID = [
  `pid=$(basename "$TMPDIR" | sed -n 's/^oc-exec-sandbox-\\([0-9]*\\)-.*/\\1/p')`,
  'if [ -z "$pid" ]; then',
  "  for p in /proc/[0-9]*; do",
  `    if tr '\\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q 'bin/oc-exec.js'; then pid=\${p#/proc/}; break; fi`,
  "  done",
  "fi",
  'echo "oc-exec pid: $pid"',
  "",
].join("\n");

/** A .pth line Python runs at start: it leaves a mark in HOME. */
const PAYLOAD = 'import os; open(os.path.join(os.environ["HOME"], "pwned"), "w").write("ran")';

const contents = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : null);

/** The next step of the CI job: a Python that reads the site-packages the links point into. */
async function nextPython(site: string) {
  const home = e2e.home.root;
  rmSync(join(home, "pwned"), { force: true });
  const ran = await runBash(["-e"], `python3 -c 'import site, sys; site.addsitedir(sys.argv[1])' ${site}`, {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home },
  });
  expect(ran.code).toBe(0);
  return existsSync(join(home, "pwned"));
}

describe.skipIf(skip)("oc-exec's own writes after a sandboxed turn (--junit, -o)", () => {
  it("links planted at every temporary name the old writers used are not written through: the reports are written, the next python runs nothing", async () => {
    // Old path shown working: test/unit/safe-write.test.ts, "the old writers follow a planted link".
    const site = join(e2e.home.root, "site-packages-a");
    mkdirSync(site);
    const evilJunit = join(site, "evil-junit.pth");
    const evil = join(site, "evil.pth");
    // report.xml.<pid>.tmp (--junit), and .answer.md.<pid>.<ms>.tmp for the next 20 s (-o).
    const script = `${FIND_PID}
python3 - "$pid" ${evilJunit} ${evil} <<'PY'
import os, sys, time
pid, junit, answer = sys.argv[1:]
os.symlink(junit, f"report.xml.{pid}.tmp")
now = int(time.time() * 1000)
for ms in range(now, now + 20000):
    os.symlink(answer, f".answer.md.{pid}.{ms}.tmp")
print("planted")
PY`;
    const { prompt } = attackPrompt(script, PAYLOAD);
    const workspace = e2e.workspace();
    const run = await e2e.run(
      ["--sandbox", "workspace-write", "--auto", "--junit", "report.xml", "-o", "answer.md", prompt],
      { cwd: workspace },
    );
    const tool = run.events.find((e) => e.type === "tool");
    expect(tool?.type === "tool" ? tool.output : "").toMatch(/^oc-exec pid: \d+\nplanted$/m);
    // Nothing outside, and the next python runs nothing (old code: the answer and the report there, and it runs).
    expect({ evil: contents(evil), evilJunit: contents(evilJunit), pythonRan: await nextPython(site) }).toEqual({
      evil: null,
      evilJunit: null,
      pythonRan: false,
    });
    expect(run.code).toBe(0);
    expect(run.result).toMatchObject({ class: "success", text: PAYLOAD });
    expect(readFileSync(join(workspace, "answer.md"), "utf8")).toBe(PAYLOAD);
    expect(lstatSync(join(workspace, "answer.md")).isFile()).toBe(true);
    expect(lstatSync(join(workspace, "report.xml")).isFile()).toBe(true);
    expect(readFileSync(join(workspace, "report.xml"), "utf8")).toMatch(
      /^<\?xml[\s\S]*<testcase [\s\S]*<\/testsuites>\n$/,
    );
    // The 20,001 planted links lead out of the workspace: gone after the turn, counted in one warning.
    const [warned] = run.events.filter((e) => e.type === "warning" && e.code === "sandbox_outside_link");
    expect(warned?.type === "warning" && warned.message).toMatch(/ and 19991 more; removed, /);
    expect(readdirSync(workspace).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("a link planted at the destination itself, leading out of the workspace, is gone before oc-exec writes there: both written as files, nothing outside", async () => {
    const site = join(e2e.home.root, "site-packages-b");
    mkdirSync(site);
    const evilJunit = join(site, "evil-junit.pth");
    const evil = join(site, "evil.pth");
    const script = `${FIND_PID}ln -s ${evilJunit} report.xml && ln -s ${evil} answer.md && echo planted`;
    const { prompt } = attackPrompt(script, PAYLOAD);
    const workspace = e2e.workspace();
    const run = await e2e.run(
      ["--sandbox", "workspace-write", "--auto", "--junit", "report.xml", "-o", "answer.md", prompt],
      { cwd: workspace },
    );
    expect({ evil: contents(evil), evilJunit: contents(evilJunit), pythonRan: await nextPython(site) }).toEqual({
      evil: null,
      evilJunit: null,
      pythonRan: false,
    });
    expect(run.code, run.stderr).toBe(0);
    const answer = join(workspace, "answer.md");
    const report = join(workspace, "report.xml");
    for (const path of [answer, report]) expect(isLink(path)).toBe(false);
    expect(readFileSync(answer, "utf8")).toBe(run.result.text);
    expect(readFileSync(report, "utf8")).toContain("<testsuites");
    expect(run.events.filter((e) => e.type === "warning" && e.code === "sandbox_outside_link")).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(
          /^the turn left links that lead out of the workspace: (answer\.md|report\.xml) -> .*, (answer\.md|report\.xml) -> .*; removed, /,
        ),
      }),
    ]);
  });

  it("a link planted at the destination that stays inside the workspace is refused: the result line, then exit 5 naming the option and the path", async () => {
    const script = `${FIND_PID}echo mine > notes.md && ln -s notes.md answer.md && echo planted`;
    const { prompt } = attackPrompt(script, "an answer");
    const workspace = e2e.workspace();
    const run = await e2e.run(["--sandbox", "workspace-write", "--auto", "-o", "answer.md", prompt], {
      cwd: workspace,
    });
    expect(run.code).toBe(5);
    expect(run.types.at(-1)).toBe("result");
    const answer = join(workspace, "answer.md");
    expect(run.result).toMatchObject({
      class: "config_error",
      error: {
        name: "OutputPathRefused",
        message: `--output-last-message ${answer} was not written: ${answer} is a symbolic link now, made during the run (to notes.md); oc-exec never writes through a link: name the file itself`,
      },
    });
    // Nothing went through the link: the file it names is as the agent left it.
    expect(readFileSync(join(workspace, "notes.md"), "utf8")).toBe("mine\n");
    expect(readlinkSync(answer)).toBe("notes.md");
  });
});

const isLink = (path: string) => {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
};

describe.skipIf(skip)("links the agent leaves in the workspace, followed by the job's next step", () => {
  it("a link to a secret store outside the workspace: zip -r packs the key without the protection; after a sandboxed turn the link is gone and named", async () => {
    const secrets = join(e2e.home.root, "runner-ssh");
    mkdirSync(secrets, { recursive: true });
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(secrets, "id_ed25519"), "PRIVATE-KEY-CANARY\n");
    const plant = `ln -s ${secrets} leak && ln -s inside.txt inside-link && echo planted`;
    const zipped = async (workspace: string) => {
      const zip = await runBash(
        ["-e"],
        "zip -qr ../artifact.zip . && unzip -p ../artifact.zip leak/id_ed25519 || true",
        {
          cwd: workspace,
          env: { PATH: process.env.PATH },
        },
      );
      rmSync(join(workspace, "..", "artifact.zip"), { force: true });
      return zip.stdout;
    };
    // Without the protection: the same links, made by hand, and the next step packs the key.
    const bare = join(e2e.workspace(), "ws");
    mkdirSync(bare);
    expect((await runBash(["-e"], plant, { cwd: bare, env: { PATH: process.env.PATH } })).code).toBe(0);
    expect(await zipped(bare)).toBe("PRIVATE-KEY-CANARY\n");

    // With it: the agent makes them in a sandboxed turn; the one leading out is removed and named.
    const workspace = join(e2e.workspace(), "ws");
    mkdirSync(workspace);
    const { prompt } = attackPrompt(plant);
    const run = await e2e.run(["-q", "--sandbox", "workspace-write", "--auto", prompt], { cwd: workspace });
    expect(run.code, run.stderr).toBe(0);
    expect(isLink(join(workspace, "leak"))).toBe(false);
    // A link that stays inside the workspace is the agent's work, and stays.
    expect(readlinkSync(join(workspace, "inside-link"))).toBe("inside.txt");
    expect(run.events.filter((e) => e.type === "warning" && e.code === "sandbox_outside_link")).toEqual([
      expect.objectContaining({
        message: `the turn left links that lead out of the workspace: leak -> ${secrets}; removed, since a later step that follows links (zip -r, an artifact upload, a cache) would read what the sandbox hid`,
      }),
    ]);
    expect(await zipped(workspace)).toBe("");
  });
});

describe.skipIf(skip)("links hidden behind many files", () => {
  it("three trees of 260,000 empty files, a link to a secret made in each: every link is found and removed", async () => {
    // The walk used to stop after 500,000 entries: it saw the first tree's link only, and the
    // others stayed for the job's zip -r to follow. The files are made beforehand (the agent makes
    // them as well, in ~90 s under opencode's file watcher); the agent makes the links.
    const secrets = join(e2e.home.root, "runner-ssh-deep");
    mkdirSync(secrets, { recursive: true });
    const workspace = e2e.workspace();
    const made = await runBash(
      ["-e"],
      "for d in d1 d2 d3; do mkdir -p $d/x && (cd $d && seq 1 260000 | xargs touch); done",
      {
        cwd: workspace,
        env: { PATH: process.env.PATH },
      },
    );
    expect(made.code).toBe(0);
    // opencode's own snapshot (a git add of the whole tree after each step) would take minutes here.
    writeFileSync(join(workspace, "opencode.json"), '{"snapshot": false}');
    const plant = `for d in d1 d2 d3; do ln -s ${secrets} $d/x/leak; done; echo planted`;
    try {
      const run = await e2e.run(["-q", "--sandbox", "workspace-write", "--auto", attackPrompt(plant).prompt], {
        cwd: workspace,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(["d1", "d2", "d3"].filter((d) => isLink(join(workspace, d, "x", "leak")))).toEqual([]);
      const [warned] = run.events.filter((e) => e.type === "warning" && e.code === "sandbox_outside_link");
      expect(warned?.type === "warning" && warned.message).toMatch(
        new RegExp(
          `^the turn left links that lead out of the workspace: (d[123]/x/leak -> ${secrets}(, )?){3}; removed, `,
        ),
      );
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  }, 240_000);
});

describe.skipIf(skip)("named pipes the agent leaves in the workspace, read by the job's next step", () => {
  // The job's next step reads every file of the workspace (a loop of `cat` here; a linter, a
  // checksum, an upload that reads each file alike). A named pipe blocks it for ever, and neither git nor a patch shows one.
  const nextStep = (cwd: string) =>
    runBash(
      ["-e"],
      `timeout 5 sh -c 'for f in ./* ./deep/*; do if [ -e "$f" ] && [ ! -d "$f" ]; then cat "$f"; fi; done > /dev/null'; echo read`,
      {
        cwd,
        env: process.env,
      },
    );
  const PLANT = "mkfifo trap.fifo && mkdir -p deep && mkfifo deep/trap2.fifo && echo planted";

  it("without the sandbox the pipes stay, invisible to git, and the next step hangs on them", async () => {
    const workspace = e2e.workspace();
    const run = await e2e.run(["-q", "-n", "--auto", attackPrompt(PLANT).prompt], { cwd: workspace });
    expect(run.code, run.stderr).toBe(0);
    expect(lstatSync(join(workspace, "trap.fifo")).isFIFO()).toBe(true);
    expect(run.result.workspace_changes?.files.map((f) => f.path)).toEqual([]);
    // timeout ended the hung read: 124, and `set -e` stopped the step there.
    expect(await nextStep(workspace)).toMatchObject({ code: 124, stdout: "" });
  });

  it("after a sandboxed turn they are removed and named, and the next step reads the workspace", async () => {
    const workspace = e2e.workspace();
    const run = await e2e.run(["-q", "-n", "--sandbox", "workspace-write", "--auto", attackPrompt(PLANT).prompt], {
      cwd: workspace,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(workspace, "trap.fifo"))).toBe(false);
    expect(existsSync(join(workspace, "deep", "trap2.fifo"))).toBe(false);
    expect(run.events.filter((e) => e.type === "warning" && e.code === "sandbox_special_file")).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(
          /^the turn left named pipes or sockets in the workspace: (trap\.fifo|deep\/trap2\.fifo), (trap\.fifo|deep\/trap2\.fifo); removed, /,
        ),
      }),
    ]);
    expect(await nextStep(workspace)).toMatchObject({ code: 0, stdout: "read\n" });
  });
});

describe.skipIf(skip)("sparse files the agent leaves for the patch hand-off", () => {
  // `truncate` costs the agent no disk. Before the limit, oc-exec read, hashed and compressed each
  // whole after the turn: three of 1,900 MB took it 30 s more than the turn, 4 GB of memory and a
  // 7.5 MB patch here (a thousand: hours of the job, and a patch too large to write at the end).
  const PLANT = "for i in 1 2 3; do truncate -s 1900M big$i.bin; done; echo small > small.txt; echo planted";

  it("growth past 256 MiB is not read: no patch, an output_patch_failed warning naming the file, the turn's result as it was", async () => {
    const workspace = e2e.workspace();
    const { execFileSync } = await import("node:child_process");
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.email=ci@example.com", "-c", "user.name=ci", ...args], {
        cwd: workspace,
        env: e2e.home.env,
      });
    git("init", "-q");
    writeFileSync(join(workspace, "a.txt"), "a\n");
    git("add", "-A");
    git("commit", "-qm", "base");
    const patch = join(e2e.home.root, "agent.patch");
    const run = await e2e.run(
      ["-q", "--sandbox", "workspace-write", "--auto", "--output-patch", patch, attackPrompt(PLANT).prompt],
      { cwd: workspace },
    );
    try {
      expect(run.code, run.stderr).toBe(0);
      expect(run.result).toMatchObject({ class: "success" });
      expect(run.result.output_patch).toBeUndefined();
      expect(existsSync(patch)).toBe(false);
      expect(run.events.filter((e) => e.type === "warning" && e.code === "output_patch_failed")).toEqual([
        expect.objectContaining({
          message: `could not write --output-patch ${patch}: the workspace's files hold more than 256 MiB beyond what they held before the turn (big1.bin is 1992294400 bytes): too large for a patch`,
        }),
      ]);
    } finally {
      for (const i of [1, 2, 3]) rmSync(join(workspace, `big${i}.bin`), { force: true });
    }
  });
});
