// The hand-off (--output-patch FILE) with the real opencode and the scripted model playing a
// prompt-injected agent: it adds, changes, deletes, writes a binary file, sets an executable bit,
// plants a diff driver (.gitattributes) and an fsmonitor (through .git/commondir, since the sandbox
// keeps .git/config read-only), writes FILE's own path, and swaps a tracked directory for a link to
// a planted secret outside the workspace. The patch then applies with git apply to a clean clone
// made before the turn and gives exactly the workspace's new tree; nothing planted ran while oc-exec
// made it (the same plants do run in the job's next git call: the attack is live), and the secret
// behind the link is not in the patch (a plain read through the link gets it).
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { attackPrompt, plant, secret } from "../support/escape.js";
import { neutralGit, neutralGitEnv } from "../support/git.js";
import { eventsOf } from "../support/run-cli.js";
import { sandboxSkip } from "../support/sandbox-skip.js";

const e2e = useE2E();
const { skip } = await sandboxSkip("--output-patch in the sandbox (test/e2e/output-patch.test.ts)");

const neutral = neutralGitEnv;
const git = neutralGit;

/** Every file under dir but .git and the names skipped: path → mode and bytes (a link: its target). */
function tree(dir: string, skipped: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const full = join(at, name);
      if (name === ".git" || skipped.includes(relative(dir, full))) continue;
      const info = lstatSync(full);
      if (info.isSymbolicLink()) out[relative(dir, full)] = `link:${readlinkSync(full)}`;
      else if (info.isDirectory()) walk(full);
      else out[relative(dir, full)] = `${info.mode & 0o100 ? "x" : "-"}:${readFileSync(full).toString("base64")}`;
    }
  };
  walk(dir);
  return out;
}

/** A committed workspace, a clean clone of it made now (before the turn), and the attack's script. */
function setUp() {
  const planted = plant(e2e);
  const ws = planted.workspace;
  git(ws, "init", "-q");
  writeFileSync(join(ws, "tracked.txt"), "one\ntwo\nthree\n");
  writeFileSync(join(ws, "doomed.txt"), "delete me\n");
  writeFileSync(join(ws, "tool.sh"), "#!/bin/sh\necho tool\n");
  mkdirSync(join(ws, "conf"));
  writeFileSync(join(ws, "conf", "credentials"), "placeholder\n");
  git(ws, "add", ".");
  git(ws, "commit", "-q", "-m", "base");
  const pristine = `${ws}-pristine`;
  git(e2e.home.root, "clone", "-q", ws, pristine);
  const ran = join(e2e.home.root, `planted-ran-${secret().slice(0, 6)}`);
  const aws = join(e2e.home.root, ".aws");
  const script = [
    "set -e",
    "echo added > added.txt",
    "echo four >> tracked.txt",
    "rm doomed.txt",
    "printf 'bin\\000ary\\001\\002\\377\\000' > blob.bin",
    "chmod +x tool.sh",
    // A diff driver and textconv for every file; the driver is defined in a config the agent can reach.
    "printf '* diff=evil\\n' > .gitattributes",
    // (refused under the sandbox, where all of .git is read-only; planted without one)
    `if ( mkdir .git/x && cp -r .git/objects .git/refs .git/HEAD .git/x/ && cp .git/config .git/x/config && printf '[core]\\n\\tfsmonitor = touch ${ran}.fsmonitor\\n[diff "evil"]\\n\\tcommand = touch ${ran}.diff\\n\\ttextconv = touch ${ran}.textconv\\n' >> .git/x/config && echo x > .git/commondir && echo planted-by-the-agent > .git/description ) 2>/dev/null; then echo "git: planted"; else echo "git: refused"; fi`,
    // The patch file's own path, and a tracked directory swapped for a link to a secret outside.
    "echo planted > agent.patch",
    `rm -r conf && ln -s ${aws} conf`,
    "echo changes-made",
  ].join("\n");
  return { ...planted, ws, pristine, ran, aws, script };
}

async function patchTurn(args: string[]) {
  const t = setUp();
  const { prompt, marker } = attackPrompt(t.script, "Patched.");
  const file = join(t.ws, "agent.patch");
  const run = await e2e.run(["-q", ...args, "--auto", "--output-patch", "agent.patch", prompt], {
    cwd: t.ws,
    extraEnv: t.tokens,
  });
  return { ...t, run, marker, file };
}

function expectHandOff(t: Awaited<ReturnType<typeof patchTurn>>, sandboxed: boolean) {
  expect(t.run.code).toBe(0);
  expect(t.run.result).toMatchObject({ class: "success", text: "Patched." });
  expect(eventsOf(t.run, "tool")[0]?.output).toContain("changes-made");
  expect(eventsOf(t.run, "tool")[0]?.output).toContain(sandboxed ? "git: refused" : "git: planted");
  // Nothing the agent planted ran while oc-exec listed and patched the workspace.
  for (const kind of ["fsmonitor", "diff", "textconv"]) expect(existsSync(`${t.ran}.${kind}`), kind).toBe(false);
  const patch = readFileSync(t.file);
  expect(patch.toString("latin1")).not.toContain("planted");
  // Under the sandbox the link to the secret outside (conf) is removed after the turn
  // (sandbox_outside_link): the patch then deletes conf/ and adds no link.
  expect(t.run.result.output_patch).toEqual({ path: t.file, files: sandboxed ? 7 : 8, bytes: patch.length });
  const names = [...patch.toString("latin1").matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
  expect(names).toEqual([
    ".gitattributes",
    "added.txt",
    "blob.bin",
    ...(sandboxed ? [] : ["conf"]),
    "conf/credentials",
    "doomed.txt",
    "tool.sh",
    "tracked.txt",
  ]);
  // The secret behind the planted link: a plain read through it gets it (without a sandbox; under
  // one the link is gone), the patch never does.
  const awsSecret = readFileSync(join(t.aws, "credentials"), "utf8");
  if (sandboxed) {
    expect(existsSync(join(t.ws, "conf"))).toBe(false);
    expect(eventsOf(t.run, "warning").filter((w) => w.code === "sandbox_outside_link")).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^the turn left links that lead out of the workspace: conf -> /),
      }),
    ]);
  } else expect(readFileSync(join(t.ws, "conf", "credentials"), "utf8")).toBe(awsSecret);
  expect(patch.toString("latin1")).not.toContain(awsSecret.trim().split(" = ")[1]);
  // The next step of a job: git apply on a clean checkout gives exactly the new tree, .git aside.
  git(t.pristine, "apply", "--check", t.file);
  git(t.pristine, "apply", t.file);
  // Under the sandbox oc-exec makes .opencode/ before the turn (to keep it read-only): not the turn's.
  expect(tree(t.pristine)).toEqual(tree(t.ws, ["agent.patch", ".opencode"]));
  expect(readFileSync(join(t.pristine, "blob.bin"))).toEqual(Buffer.from("bin\0ary\x01\x02\xff\0", "latin1"));
  expect(lstatSync(join(t.pristine, "tool.sh")).mode & 0o111).toBe(0o111);
  expect(existsSync(join(t.pristine, ".git", "x"))).toBe(false);
  expect(readFileSync(join(t.pristine, ".git", "description"), "utf8")).not.toContain("planted");
  // Without a sandbox the plants are live: the job's next plain `git status` in the workspace runs
  // the fsmonitor. Under it, .git was read-only and nothing was planted.
  execFileSync("git", ["status", "--short"], { cwd: t.ws, env: neutral, stdio: "ignore" });
  expect(existsSync(`${t.ran}.fsmonitor`)).toBe(!sandboxed);
}

describe.skipIf(skip)("--output-patch after a sandboxed turn (--sandbox workspace-write)", () => {
  it("the patch applies to a clean checkout and gives the new tree; nothing planted runs; no secret through a link", async () => {
    const t = await patchTurn(["--sandbox", "workspace-write"]);
    expectHandOff(t, true);
  });
});

describe("--output-patch without a sandbox", () => {
  it("the same hand-off from a turn with no sandbox", async () => {
    const t = await patchTurn([]);
    expectHandOff(t, false);
  });
});

describe("--output-patch refused before the turn (exit 5, no model call)", () => {
  it.each([
    [
      "a directory that does not exist",
      "/nonexistent/dir/agent.patch",
      /the directory \/nonexistent\/dir does not exist$/,
    ],
    ["a directory", ".", /: is a directory$/],
    ["a file's path as its directory", "tracked/agent.patch", /the directory \S+\/tracked is not a directory$/],
  ])("into %s", async (_what, path, message) => {
    const ws = e2e.workspace();
    git(ws, "init", "-q");
    writeFileSync(join(ws, "tracked"), "a file\n");
    const before = e2e.server.requests.length;
    const run = await e2e.run(["-q", "--output-patch", path, "scenario:plain hi"], { cwd: ws });
    expect(run.code).toBe(5);
    expect(run.types).toEqual(["run.started", "result"]);
    expect(run.result.error).toMatchObject({ name: "OutputPathError", message: expect.stringMatching(message) });
    expect(e2e.server.requests.length).toBe(before);
  });

  // root may write anywhere: this one needs another user.
  it.skipIf(process.getuid?.() === 0)("a directory it cannot write in", async () => {
    const ws = e2e.workspace();
    git(ws, "init", "-q");
    const locked = join(e2e.home.root, "locked");
    mkdirSync(locked, { recursive: true });
    chmodSync(locked, 0o555);
    const before = e2e.server.requests.length;
    const run = await e2e.run(["-q", "--output-patch", join(locked, "agent.patch"), "scenario:plain hi"], { cwd: ws });
    expect(run.code).toBe(5);
    expect(run.result.error?.message).toMatch(/cannot write in .*locked \(EACCES\)$/);
    expect(e2e.server.requests.length).toBe(before);
  });

  it("a workspace that is not a git work tree", async () => {
    const ws = e2e.workspace();
    const before = e2e.server.requests.length;
    const run = await e2e.run(["-q", "--output-patch", "agent.patch", "scenario:plain hi"], { cwd: ws });
    expect(run.code).toBe(5);
    expect(run.result.error).toMatchObject({
      name: "OutputPathError",
      message: expect.stringMatching(/^--output-patch .*agent\.patch: .* is not in a git work tree/),
    });
    expect(e2e.server.requests.length).toBe(before);
    expect(existsSync(join(ws, "agent.patch"))).toBe(false);
  });

  it("with a conversation: a usage error", async () => {
    const run = await e2e.run(["-q", "--input-format", "jsonl", "--output-patch", "p.patch"], { stdin: "" });
    expect(run.code).toBe(5);
    expect(run.result.error?.message).toMatch(/--output-patch writes one turn's changes/);
  });
});
