// The one way oc-exec writes a file (--junit, -o, server records, the proxy CA, caches): whole or
// not at all, and never through a link it did not make. A sandboxed agent can write in the
// workspace, learn oc-exec's pid (its TMPDIR is named after it) and plant a symbolic link at any
// name it can predict; oc-exec, outside the sandbox after the turn, would then write the model's
// answer wherever the link points (a .pth in site-packages, ~/.bashrc). So:
// - the temporary file is created in the destination's directory under a random name, with
//   O_CREAT|O_EXCL|O_NOFOLLOW: a link already there makes open fail instead of being followed;
// - it is renamed over the destination: rename replaces a link, it never writes through one;
// - a destination that is a symbolic link is refused, when planned and when written. A link that
//   was there before the run is refused too: it may come from the checkout of a pull request, and
//   oc-exec cannot tell the user's own link from one an attacker shipped (name its target instead);
// - the directory is resolved when the write is planned (before the turn), and a write whose
//   directory resolves elsewhere afterwards (a directory swapped for a link during the turn) is refused.
// Node has no openat(2), so what remains is a race with a process that outlives the turn and
// swaps a directory between the check and the rename; the sandbox ends every process of the turn.
// Errors travel as values: `refused` when the path was made unsafe, otherwise an I/O failure.
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** A destination checked before the run: its directory's real path and identity at that moment. */
export type PlannedWrite = { path: string; dir: string; realDir: string; dev: number; ino: number; name: string };

/** Why a write did not happen; `refused`: the path was unsafe (a link), not an I/O failure. */
export type WriteProblem = { problem: string; refused: boolean };

const FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
/** A random name is taken only if someone guessed 64 bits; a few tries cover a planted clash. */
const TRIES = 4;

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code ?? String(error);

function linkTarget(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "?";
  }
}

/** What stands at the destination, as a problem, or null when a file may be written there. */
function destinationProblem(file: string, when: string): WriteProblem | null {
  let stat: Stats;
  try {
    stat = lstatSync(file);
  } catch {
    return null; // Not there yet: it will be.
  }
  if (stat.isSymbolicLink())
    return {
      problem: `${file} is a symbolic link${when} (to ${linkTarget(file)}); oc-exec never writes through a link: name the file itself`,
      refused: true,
    };
  if (stat.isDirectory()) return { problem: `${file} is a directory`, refused: false };
  return null;
}

/**
 * Checks a destination now (before anything runs) and records where its directory is. `probe`:
 * also creates and removes a file there, so that a place no file can be made in (a read-only
 * mount, /proc, a directory root may not write either) is found before the paid turn, not after.
 */
export function planWrite(path: string, { probe = false } = {}): PlannedWrite | WriteProblem {
  const file = resolve(path);
  const dir = dirname(file);
  let realDir: string;
  let stat: Stats;
  try {
    realDir = realpathSync(dir);
    stat = statSync(realDir);
  } catch (error) {
    return { problem: `the directory ${dir} cannot be used (${errno(error)})`, refused: false };
  }
  if (!stat.isDirectory()) return { problem: `${dir} is not a directory`, refused: false };
  const there = destinationProblem(file, "");
  if (there) return there;
  const plan = { path: file, dir, realDir, dev: stat.dev, ino: stat.ino, name: basename(file) };
  if (probe) {
    const made = createTemp(plan, 0o600);
    if ("problem" in made) return made;
    closeSync(made.fd);
    unlinkSync(made.temp);
  }
  return plan;
}

/** The planned directory, if it still resolves to the same directory; a problem otherwise. */
function sameDirectory(plan: PlannedWrite): WriteProblem | null {
  let now: string;
  let stat: Stats;
  try {
    now = realpathSync(plan.dir);
    stat = statSync(now);
  } catch (error) {
    return { problem: `the directory ${plan.dir} is gone (${errno(error)})`, refused: false };
  }
  if (now !== plan.realDir || stat.dev !== plan.dev || stat.ino !== plan.ino)
    return {
      problem: `the directory ${plan.dir} now resolves to ${now}, not to ${plan.realDir} as when the run started (replaced by a link during the run)`,
      refused: true,
    };
  return null;
}

/** A new file of our own, under a name nobody could plant a link at in advance. */
function createTemp(plan: PlannedWrite, mode: number): { fd: number; temp: string } | WriteProblem {
  let last: unknown;
  for (let i = 0; i < TRIES; i++) {
    const temp = join(plan.realDir, `.${plan.name}.${randomBytes(8).toString("hex")}.tmp`);
    try {
      return { fd: openSync(temp, FLAGS, mode), temp };
    } catch (error) {
      last = error;
      if (errno(error) !== "EEXIST" && errno(error) !== "ELOOP") break;
    }
  }
  return { problem: `cannot create a file in ${plan.realDir} (${errno(last)})`, refused: false };
}

function writeAll(fd: number, data: string | Buffer): void {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

/**
 * Writes data to a planned destination, atomically; `mode` when given is the file's exact mode
 * (umask aside), otherwise 0o666 less the umask, as a plain write would make it.
 */
export function writePlanned(
  plan: PlannedWrite,
  data: string | Buffer,
  options: { mode?: number } = {},
): WriteProblem | undefined {
  const moved = sameDirectory(plan) ?? destinationProblem(plan.path, " now, made during the run");
  if (moved) return moved;
  const made = createTemp(plan, options.mode ?? 0o666);
  if ("problem" in made) return made;
  const { fd, temp } = made;
  let renamed = false;
  try {
    try {
      writeAll(fd, data);
      if (options.mode !== undefined) fchmodSync(fd, options.mode);
      // The file just written is the one at the temporary name in the planned directory.
      const mine = fstatSync(fd);
      const there = lstatSync(temp);
      if (mine.ino !== there.ino || mine.dev !== there.dev)
        return { problem: `${temp} was replaced while oc-exec wrote it`, refused: true };
    } finally {
      closeSync(fd);
    }
    const again = sameDirectory(plan);
    if (again) return again;
    renameSync(temp, join(plan.realDir, plan.name));
    renamed = true;
    return undefined;
  } catch (error) {
    return { problem: (error as Error).message, refused: false };
  } finally {
    // Our own temporary file, if the rename did not take it (unlink removes a link, never its target).
    if (!renamed)
      try {
        unlinkSync(temp);
      } catch {
        // Already gone.
      }
  }
}

/** Plans and writes at once: for oc-exec's own files, which no turn writes between the two. */
export function writeFileSafely(
  path: string,
  data: string | Buffer,
  options: { mode?: number } = {},
): WriteProblem | undefined {
  const plan = planWrite(path);
  return "problem" in plan ? plan : writePlanned(plan, data, options);
}
