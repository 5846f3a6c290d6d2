// The safe writer (src/sys/safe-write.ts) attacked the way a sandboxed agent would: links planted
// at every temporary name it could predict, at the destination, and a directory swapped for a link
// between the plan and the write. The old pattern (a predictable temporary name, writeFileSync) is
// shown writing through the same links.
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type PlannedWrite, planWrite, writeFileSafely, writePlanned } from "../../src/sys/safe-write.js";

// randomBytes as the writer draws its names, so a test can make it draw a name a link waits at.
const drawn = vi.hoisted(() => ({ zeros: 0 }));
vi.mock("node:crypto", async (original) => {
  const crypto = await original<typeof import("node:crypto")>();
  return {
    ...crypto,
    randomBytes: (n: number) => {
      if (drawn.zeros === 0) return crypto.randomBytes(n);
      drawn.zeros--;
      return Buffer.alloc(n);
    },
  };
});

let root: string;
let outside: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "safe-write-"));
  mkdirSync(join(root, "ws"));
  mkdirSync(join(root, "outside"));
  outside = join(root, "outside", "evil.pth");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The names the old writers used, for this pid and the milliseconds around now. */
function oldTempNames(file: string, pid: number): string[] {
  const now = Date.now();
  const ms = Array.from({ length: 50 }, (_, i) => now - 10 + i);
  return [
    `${file}.${pid}.tmp`, // --junit, the registry, the proxy CA, the version cache
    ...ms.map((m) => join(dirname(file), `.${basename(file)}.${pid}.${m}.tmp`)), // -o
  ];
}

/** The old -o writer (src/domain/output/last-message.ts before the safe writer), verbatim. */
function oldWriteFileAtomic(path: string, text: string): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** The old --junit writer, verbatim. */
function oldJunitWrite(file: string, text: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, file);
}

const plan = (path: string): PlannedWrite => {
  const planned = planWrite(path);
  if ("problem" in planned) throw new Error(planned.problem);
  return planned;
};

describe("the old writers follow a planted link (what the safe writer replaces)", () => {
  it("--junit: a link at FILE.<pid>.tmp gets the report, outside the workspace", () => {
    const file = join(root, "ws", "report.xml");
    symlinkSync(outside, `${file}.${process.pid}.tmp`);
    oldJunitWrite(file, "import os; os.system('id')\n");
    expect(readFileSync(outside, "utf8")).toBe("import os; os.system('id')\n");
  });

  it("-o: a link at .FILE.<pid>.<ms>.tmp for the milliseconds around now gets the answer", () => {
    const file = join(root, "ws", "answer.md");
    const names = oldTempNames(file, process.pid).slice(1);
    for (const name of names) symlinkSync(outside, name);
    // The attacker plants a window of milliseconds; the clock is held inside it here, so that a slow
    // machine (planting took longer than the window) cannot make the old writer miss.
    const now = vi.spyOn(Date, "now").mockReturnValue(Number(/\.(\d+)\.tmp$/.exec(names[25]!)![1]));
    try {
      oldWriteFileAtomic(file, "the answer\n");
    } finally {
      now.mockRestore();
    }
    expect(readFileSync(outside, "utf8")).toBe("the answer\n");
  });
});

describe("writeFileSafely / writePlanned", () => {
  it("writes the file whole, replacing what was there, and leaves no temporary file", () => {
    const file = join(root, "ws", "answer.md");
    writeFileSync(file, "old");
    expect(writeFileSafely(file, "new\n")).toBeUndefined();
    expect(readFileSync(file, "utf8")).toBe("new\n");
    expect(readdirSync(join(root, "ws"))).toEqual(["answer.md"]);
  });

  it("no planted link at any name the old writers used, nor at a thousand guessed names, is written through", () => {
    const file = join(root, "ws", "report.xml");
    const guessed = Array.from({ length: 1000 }, (_, i) => join(root, "ws", `.report.xml.${i.toString(16)}.tmp`));
    const planted = [...oldTempNames(file, process.pid), ...guessed];
    for (const name of planted) symlinkSync(outside, name);
    expect(writeFileSafely(file, "<testsuites/>\n")).toBeUndefined();
    expect(existsSync(outside)).toBe(false);
    expect(readFileSync(file, "utf8")).toBe("<testsuites/>\n");
    expect(lstatSync(file).isFile()).toBe(true);
    // The planted links are still there, untouched; nothing else was added.
    expect(readdirSync(join(root, "ws")).length).toBe(new Set(planted.map((p) => basename(p))).size + 1);
  });

  it("a link at the very temporary name it draws is not followed: that open fails, another name is drawn", () => {
    const file = join(root, "ws", "answer.md");
    symlinkSync(outside, join(root, "ws", ".answer.md.0000000000000000.tmp"));
    drawn.zeros = 1;
    expect(writeFileSafely(file, "x")).toBeUndefined();
    expect(drawn.zeros).toBe(0);
    expect(existsSync(outside)).toBe(false);
    expect(readFileSync(file, "utf8")).toBe("x");
  });

  it("when every name it draws holds a link, nothing is written and it says so", () => {
    const file = join(root, "ws", "answer.md");
    symlinkSync(outside, join(root, "ws", ".answer.md.0000000000000000.tmp"));
    drawn.zeros = 10;
    expect(writeFileSafely(file, "x")).toEqual({
      problem: `cannot create a file in ${join(root, "ws")} (EEXIST)`,
      refused: false,
    });
    drawn.zeros = 0;
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(file)).toBe(false);
  });

  it("refuses a destination that is a link, when planned and when it became one after the plan", () => {
    const file = join(root, "ws", "answer.md");
    symlinkSync(outside, file);
    expect(planWrite(file)).toEqual({
      problem: `${file} is a symbolic link (to ${outside}); oc-exec never writes through a link: name the file itself`,
      refused: true,
    });
    rmSync(file);
    const planned = plan(file);
    symlinkSync(outside, file); // planted during the turn
    expect(writePlanned(planned, "the answer")).toEqual({
      problem: `${file} is a symbolic link now, made during the run (to ${outside}); oc-exec never writes through a link: name the file itself`,
      refused: true,
    });
    expect(existsSync(outside)).toBe(false);
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
  });

  it("refuses when the directory was swapped for a link after the plan", () => {
    const dir = join(root, "ws", "reports");
    mkdirSync(dir);
    const file = join(dir, "report.xml");
    const planned = plan(file);
    rmSync(dir, { recursive: true });
    symlinkSync(join(root, "outside"), dir);
    expect(writePlanned(planned, "<testsuites/>")).toEqual({
      problem: `the directory ${dir} now resolves to ${join(root, "outside")}, not to ${dir} as when the run started (replaced by a link during the run)`,
      refused: true,
    });
    expect(readdirSync(join(root, "outside"))).toEqual([]);
  });

  it("refuses a directory moved away and another put in its place (same path, another directory)", () => {
    const dir = join(root, "ws", "reports");
    mkdirSync(dir);
    const planned = plan(join(dir, "report.xml"));
    renameSync(dir, join(root, "ws", "moved"));
    mkdirSync(dir);
    expect(writePlanned(planned, "x")?.refused).toBe(true);
  });

  it("a directory at the destination, or a missing directory, is a plain problem, not a refusal", () => {
    mkdirSync(join(root, "ws", "dir"));
    expect(planWrite(join(root, "ws", "dir"))).toEqual({
      problem: `${join(root, "ws", "dir")} is a directory`,
      refused: false,
    });
    expect(planWrite(join(root, "nope", "x"))).toEqual({
      problem: `the directory ${join(root, "nope")} cannot be used (ENOENT)`,
      refused: false,
    });
  });

  it("gives the file the exact mode asked for, and a plain write's mode otherwise", () => {
    const secret = join(root, "ws", "server.json");
    writeFileSync(secret, "old", { mode: 0o644 });
    expect(writeFileSafely(secret, "{}", { mode: 0o600 })).toBeUndefined();
    expect(statSync(secret).mode & 0o777).toBe(0o600);
    const cert = join(root, "ws", "ca.crt");
    expect(writeFileSafely(cert, "cert", { mode: 0o644 })).toBeUndefined();
    expect(statSync(cert).mode & 0o777).toBe(0o644);
    const plain = join(root, "ws", "plain.txt");
    expect(writeFileSafely(plain, "x")).toBeUndefined();
    expect(statSync(plain).mode & 0o777).toBe(0o666 & ~process.umask());
  });

  it("a hard link at the destination is replaced, not written through", () => {
    const file = join(root, "ws", "answer.md");
    writeFileSync(outside, "outside");
    // Same file system: the destination is a second name for the outside file.
    linkSync(outside, file);
    expect(writeFileSafely(file, "the answer")).toBeUndefined();
    expect(readFileSync(outside, "utf8")).toBe("outside");
    expect(readFileSync(file, "utf8")).toBe("the answer");
  });
});
