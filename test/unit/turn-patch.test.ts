// --output-patch without opencode: the patch of a changed work tree, applied by the real git to a
// clean clone, gives exactly the changed tree (text, binary, modes, links, deletions, odd names);
// what the agent plants in .git and .gitattributes never runs; a directory swapped for a link to the
// outside is not read into the patch.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { diffLines } from "../../src/engine/workspace/line-diff.js";
import { dropPatchBase, type PatchBase, takePatchBase, turnPatch } from "../../src/engine/workspace/turn-patch.js";
import { SANDBOX_MOUNT_POINTS } from "../../src/plan/sandbox-spec.js";

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd, env, stdio: "pipe" });

function repo(files: Record<string, string | Buffer>): { root: string; ws: string } {
  const root = mkdtempSync(join(tmpdir(), "oc-exec-patch-test-"));
  roots.push(root);
  const ws = join(root, "ws");
  mkdirSync(ws);
  git(ws, "init", "-q");
  for (const [path, data] of Object.entries(files)) {
    mkdirSync(join(ws, path, ".."), { recursive: true });
    writeFileSync(join(ws, path), data);
  }
  git(ws, "add", ".");
  git(ws, "commit", "-q", "-m", "start");
  return { root, ws };
}

/** Every file under dir but .git: path → mode and bytes (a link: its target). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      if (name === ".git") continue;
      const full = join(at, name);
      const info = lstatSync(full);
      if (info.isDirectory()) walk(full);
      else if (info.isSymbolicLink()) out[relative(dir, full)] = `link:${readlinkSync(full)}`;
      else out[relative(dir, full)] = `${info.mode & 0o100 ? "x" : "-"}:${readFileSync(full).toString("base64")}`;
    }
  };
  walk(dir);
  return out;
}

function base(ws: string, exclude: string[] = []): PatchBase {
  const taken = takePatchBase(ws, exclude);
  if ("problem" in taken) throw new Error(taken.problem);
  return taken;
}

/** Applies the patch to a clean clone of the repository; returns the clone. */
function applyToClone(root: string, ws: string, patch: Buffer): string {
  const clone = join(root, `clone-${roots.length}-${Date.now()}`);
  git(root, "clone", "-q", ws, clone);
  const file = join(root, "p.patch");
  writeFileSync(file, patch);
  git(clone, "apply", "--check", file);
  git(clone, "apply", file);
  return clone;
}

describe("the turn's patch", () => {
  it("git apply on a clean clone reproduces the work tree: added, modified, deleted, binary, +x, links, odd names, no final newline", () => {
    const long = Array.from({ length: 60 }, (_, i) => `line ${i}\n`).join("");
    const { root, ws } = repo({
      "keep.txt": "same\n",
      "edit.txt": long,
      "gone.txt": "bye\n",
      "run.sh": "#!/bin/sh\necho hi\n",
      "bin/old.bin": Buffer.from([0, 1, 2, 3, 255, 0, 9]),
      "noeol.txt": "a\nb",
      "was-file": "x\n",
    });
    const b = base(ws);
    writeFileSync(join(ws, "edit.txt"), long.replace("line 5\n", "line five\n").replace("line 50\n", "").concat("end"));
    unlinkSync(join(ws, "gone.txt"));
    chmodSync(join(ws, "run.sh"), 0o755);
    writeFileSync(join(ws, "bin/old.bin"), Buffer.from([0, 7, 7, 7, 0]));
    writeFileSync(join(ws, "bin/new.bin"), Buffer.concat([Buffer.from([0, 0, 0]), Buffer.alloc(5000, 0x41)]));
    mkdirSync(join(ws, "new dir"));
    writeFileSync(join(ws, 'new dir/ünïcode "q"\ttab.txt'), "hi\n");
    writeFileSync(join(ws, "noeol.txt"), "a\nb\n");
    writeFileSync(join(ws, "empty.txt"), "");
    symlinkSync("keep.txt", join(ws, "link"));
    unlinkSync(join(ws, "was-file"));
    symlinkSync("keep.txt", join(ws, "was-file"));
    const patch = turnPatch(b);
    dropPatchBase(b);
    expect(existsSync(b.temp)).toBe(false);
    expect(patch.files).toBe(10);
    expect(patch.text.toString("latin1")).toContain("GIT binary patch");
    const clone = applyToClone(root, ws, patch.text);
    expect(tree(clone)).toEqual(tree(ws));
  });

  it("nothing changed: an empty patch", () => {
    const { ws } = repo({ "a.txt": "a\n" });
    const b = base(ws);
    const patch = turnPatch(b);
    dropPatchBase(b);
    expect(patch).toEqual({ text: Buffer.alloc(0), files: 0 });
  });

  it("never .git, never ignored files, never the files oc-exec writes itself; only under the workspace", () => {
    const { root, ws } = repo({ ".gitignore": "*.log\n", "sub/a.txt": "a\n", "top.txt": "t\n" });
    const sub = join(ws, "sub");
    const b = base(sub, [join(sub, "agent.patch"), join(sub, "answer.md")]);
    writeFileSync(join(ws, ".git", "description"), "changed by the agent\n");
    mkdirSync(join(sub, "nested", ".git"), { recursive: true });
    writeFileSync(join(sub, "nested", ".git", "config"), "[core]\n");
    writeFileSync(join(sub, "agent.patch"), "planted\n");
    writeFileSync(join(sub, "answer.md"), "planted\n");
    writeFileSync(join(sub, "debug.log"), "ignored\n");
    writeFileSync(join(ws, "top.txt"), "outside the workspace\n");
    writeFileSync(join(sub, "a.txt"), "b\n");
    const patch = turnPatch(b);
    dropPatchBase(b);
    expect(patch.text.toString()).toBe(
      [
        "diff --git a/sub/a.txt b/sub/a.txt",
        "index 78981922613b2afb6025042ff6bd878ac1994e85..61780798228d17af2d34fce4cfbdf35556832472 100644",
        "--- a/sub/a.txt",
        "+++ b/sub/a.txt",
        "@@ -1,1 +1,1 @@",
        "-a",
        "+b",
        "",
      ].join("\n"),
    );
    const clone = applyToClone(root, ws, patch.text);
    expect(readFileSync(join(clone, "sub/a.txt"), "utf8")).toBe("b\n");
  });

  it("a planted diff driver, textconv, filter, fsmonitor and hook never run while the patch is made", () => {
    const { root, ws } = repo({ "a.txt": "a\n" });
    const b = base(ws);
    const marker = join(root, "ran");
    const cmd = `sh -c 'echo ran >> ${marker}'`;
    writeFileSync(join(ws, ".gitattributes"), "* diff=evil filter=evil\n");
    for (const [key, value] of [
      ["diff.evil.command", cmd],
      ["diff.evil.textconv", cmd],
      ["filter.evil.clean", cmd],
      ["filter.evil.smudge", cmd],
      ["core.fsmonitor", cmd],
    ])
      git(ws, "config", key!, value!);
    writeFileSync(join(ws, ".git", "hooks", "post-index-change"), `#!/bin/sh\n${cmd}\n`, { mode: 0o755 });
    writeFileSync(join(ws, "a.txt"), "b\n");
    const patch = turnPatch(b);
    dropPatchBase(b);
    expect(patch.files).toBe(2);
    expect(existsSync(marker)).toBe(false);
    // The obvious way to make the patch, git diff in the workspace, runs what was planted (the attack is real).
    execFileSync("git", ["diff", "--binary", "HEAD"], { cwd: ws, env, stdio: "ignore" });
    expect(readFileSync(marker, "utf8").split("\n").length).toBeGreaterThan(1);
    const clone = applyToClone(root, ws, patch.text);
    expect(readFileSync(join(clone, "a.txt"), "utf8")).toBe("b\n");
  });

  it("a tracked directory the agent swapped for a link to the outside: the outside is not read into the patch", () => {
    const { root, ws } = repo({ "conf/credentials": "placeholder\n" });
    const outside = join(root, "home-aws");
    mkdirSync(outside);
    writeFileSync(join(outside, "credentials"), "aws_secret_access_key=SECRET-OUTSIDE\n");
    const b = base(ws);
    rmSync(join(ws, "conf"), { recursive: true });
    symlinkSync(outside, join(ws, "conf"));
    const patch = turnPatch(b);
    dropPatchBase(b);
    const text = patch.text.toString("latin1");
    expect(text).not.toContain("SECRET-OUTSIDE");
    // Patched as git would: the file deleted, a link added in its directory's place.
    expect(text).toContain("deleted file mode 100644");
    expect(text).toContain(`new file mode 120000`);
    const clone = applyToClone(root, ws, patch.text);
    expect(readlinkSync(join(clone, "conf"))).toBe(outside);
  });

  it("sparse files that grow the workspace past 256 MiB are not read: the patch is refused, not cut short", () => {
    const { ws } = repo({ "a.txt": "a\n" });
    const b = base(ws);
    writeFileSync(join(ws, "small.txt"), "small\n");
    // Costs the agent no disk; read whole, each took ~10 s and 4 GB of oc-exec's memory.
    execFileSync("truncate", ["-s", "1900M", join(ws, "big.bin")]);
    expect(() => turnPatch(b)).toThrow(
      "the workspace's files hold more than 256 MiB beyond what they held before the turn (big.bin is 1992294400 bytes): too large for a patch",
    );
    // Within the limit the same growth is patched whole.
    unlinkSync(join(ws, "big.bin"));
    execFileSync("truncate", ["-s", "1M", join(ws, "big.bin")]);
    expect(turnPatch(b).files).toBe(2);
    dropPatchBase(b);
  });

  it("outside a git work tree: a problem, not a patch", () => {
    const dir = mkdtempSync(join(tmpdir(), "oc-exec-patch-test-"));
    roots.push(dir);
    const taken = takePatchBase(dir, []);
    expect(taken).toEqual({ problem: expect.stringMatching(/is not in a git work tree/) });
  });
});

describe("a sandbox's mount points", () => {
  it("a new empty file where the sandbox mounts is left out; content there, or a file that was there, is not", () => {
    const { ws } = repo({ "a.txt": "a\n", ".profile": "kept\n" });
    const b = base(ws);
    writeFileSync(join(ws, ".bashrc"), "");
    mkdirSync(join(ws, ".claude"));
    writeFileSync(join(ws, ".claude", "agents"), "");
    writeFileSync(join(ws, ".zshrc"), "echo not empty\n");
    writeFileSync(join(ws, ".profile"), "");
    const patch = turnPatch(b, SANDBOX_MOUNT_POINTS);
    dropPatchBase(b);
    const names = [...patch.text.toString().matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
    expect(names).toEqual([".profile", ".zshrc"]);
  });

  it("the list is the sandbox library's own", async () => {
    const utils = (await import(
      resolve("node_modules/@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-utils.js")
    )) as { DANGEROUS_FILES: string[]; getDangerousDirectories(): string[] };
    expect([...SANDBOX_MOUNT_POINTS].sort()).toEqual(
      [...utils.DANGEROUS_FILES, ...utils.getDangerousDirectories()].sort(),
    );
  });
});

describe("diffLines", () => {
  it("finds the shortest script, and beyond the limit replaces the middle", () => {
    const ops = diffLines(["a", "b", "c", "d"], ["a", "x", "c", "d", "e"]);
    expect(ops.map((o) => `${o.op}${o.line}`)).toEqual(["=a", "-b", "+x", "=c", "=d", "+e"]);
    const capped = diffLines(["a", "b", "c", "z"], ["a", "c", "b", "z"], 1);
    expect(capped.map((o) => `${o.op}${o.line}`)).toEqual(["=a", "-b", "-c", "+c", "+b", "=z"]);
  });
});
