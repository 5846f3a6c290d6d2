// One file's change in the format `git diff --binary` writes and `git apply` reads, made here
// rather than by git: the hand-off (--output-patch) must not run git over a workspace an agent wrote
// (its .gitattributes can name a diff driver or a textconv command, its .git/config an fsmonitor).
// Text as unified hunks with three lines of context; a file holding a NUL byte in its first 8000
// bytes (git's own test) as a `GIT binary patch` (zlib, base85), forward and reverse. Index lines
// carry full blob ids: git apply checks a binary preimage against them.
import { createHash } from "node:crypto";
import { deflateSync } from "node:zlib";
import { diffLines, type LineOp } from "./line-diff.js";

/** A file as it is on one side: its git mode and its bytes (a link's bytes are its target). */
export type Side = { mode: "100644" | "100755" | "120000"; data: Buffer };

const CONTEXT = 3;
const ZERO_ID = "0".repeat(40);

function blobId(data: Buffer): string {
  return createHash("sha1").update(`blob ${data.length}\0`).update(data).digest("hex");
}

/** The patch of one path from `before` to `after` (null: absent), or "" when they are the same. */
export function filePatch(path: string, before: Side | null, after: Side | null): string {
  if (before && after && before.mode !== after.mode && (before.mode === "120000" || after.mode === "120000"))
    // A file that became a link, or the reverse: git writes a deletion and a creation.
    return filePatch(path, before, null) + filePatch(path, null, after);
  if (before && after && before.mode === after.mode && before.data.equals(after.data)) return "";
  if (!before && !after) return "";
  const a = quotePath(`a/${path}`);
  const b = quotePath(`b/${path}`);
  const oldId = before ? blobId(before.data) : ZERO_ID;
  const newId = after ? blobId(after.data) : ZERO_ID;
  let head = `diff --git ${a} ${b}\n`;
  if (!before) head += `new file mode ${after!.mode}\n`;
  else if (!after) head += `deleted file mode ${before.mode}\n`;
  else if (before.mode !== after.mode) head += `old mode ${before.mode}\nnew mode ${after.mode}\n`;
  const sameContent = before && after && before.data.equals(after.data);
  if (sameContent) return head;
  const unchangedMode = before && after && before.mode === after.mode ? ` ${before.mode}` : "";
  head += `index ${oldId}..${newId}${unchangedMode}\n`;
  const oldData = before?.data ?? Buffer.alloc(0);
  const newData = after?.data ?? Buffer.alloc(0);
  if (isBinary(oldData) || isBinary(newData))
    return `${head}GIT binary patch\n${binaryHunk(newData)}${binaryHunk(oldData)}`;
  const hunks = textHunks(oldData, newData);
  if (hunks === "") return head;
  return `${head}--- ${before ? a : "/dev/null"}\n+++ ${after ? b : "/dev/null"}\n${hunks}`;
}

/** git's own test: a NUL byte in the first 8000 bytes. */
function isBinary(data: Buffer): boolean {
  return data.subarray(0, 8000).includes(0);
}

/** Lines as latin1 text (one character per byte, so any bytes survive), each with its newline. */
function splitLines(data: Buffer): string[] {
  return data.toString("latin1").match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

function textHunks(oldData: Buffer, newData: Buffer): string {
  const ops = diffLines(splitLines(oldData), splitLines(newData));
  const changed = ops.flatMap((o, i) => (o.op === "=" ? [] : [i]));
  if (changed.length === 0) return "";
  // Changes closer than twice the context share a hunk, as in git.
  const groups: [number, number][] = [];
  for (const i of changed) {
    const last = groups.at(-1);
    if (last && i - last[1] <= 2 * CONTEXT + 1) last[1] = i;
    else groups.push([i, i]);
  }
  // Line numbers (0-based) on each side where each op starts.
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let o = 0;
  let n = 0;
  for (const op of ops) {
    oldAt.push(o);
    newAt.push(n);
    if (op.op !== "+") o++;
    if (op.op !== "-") n++;
  }
  let out = "";
  for (const [first, last] of groups) {
    const from = Math.max(0, first - CONTEXT);
    const to = Math.min(ops.length - 1, last + CONTEXT);
    const slice = ops.slice(from, to + 1);
    const oldLen = slice.filter((x) => x.op !== "+").length;
    const newLen = slice.filter((x) => x.op !== "-").length;
    out += `@@ -${range(oldAt[from]!, oldLen)} +${range(newAt[from]!, newLen)} @@\n`;
    out += slice.map(hunkLine).join("");
  }
  return out;
}

/** A hunk's range: an empty side names the line before it. */
function range(start: number, length: number): string {
  return length === 0 ? `${start},0` : `${start + 1},${length}`;
}

function hunkLine({ op, line }: LineOp): string {
  const mark = op === "=" ? " " : op;
  return line.endsWith("\n") ? `${mark}${line}` : `${mark}${line}\n\\ No newline at end of file\n`;
}

const BASE85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/** `literal SIZE`, then the deflated bytes in base85 lines of up to 52 bytes, then a blank line. */
function binaryHunk(data: Buffer): string {
  const packed = deflateSync(data);
  let out = `literal ${data.length}\n`;
  for (let at = 0; at < packed.length; at += 52) {
    const chunk = packed.subarray(at, at + 52);
    const len = chunk.length;
    out += len <= 26 ? String.fromCharCode(64 + len) : String.fromCharCode(96 + len - 26);
    for (let g = 0; g < len; g += 4) {
      let acc = 0;
      for (let i = 0; i < 4; i++) acc = acc * 256 + (chunk[g + i] ?? 0);
      let five = "";
      for (let i = 0; i < 5; i++) {
        five = BASE85[acc % 85] + five;
        acc = Math.floor(acc / 85);
      }
      out += five;
    }
    out += "\n";
  }
  return `${out}\n`;
}

/**
 * A path as git writes it: in double quotes with C escapes when it holds a control character, a
 * quote, a backslash or a byte above 0x7f (UTF-8 bytes as octal escapes, as git's core.quotePath).
 * Patch text is latin1: one character per byte.
 */
function quotePath(path: string): string {
  const bytes = Buffer.from(path, "utf8");
  if (!bytes.some((c) => c < 0x20 || c === 0x22 || c === 0x5c || c >= 0x7f)) return path;
  const named: Record<number, string> = {
    7: "a",
    8: "b",
    9: "t",
    10: "n",
    11: "v",
    12: "f",
    13: "r",
    34: '"',
    92: "\\",
  };
  let out = '"';
  for (const c of bytes) {
    if (named[c]) out += `\\${named[c]}`;
    else if (c < 0x20 || c >= 0x7f) out += `\\${c.toString(8).padStart(3, "0")}`;
    else out += String.fromCharCode(c);
  }
  return `${out}"`;
}
