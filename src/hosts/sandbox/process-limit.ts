// A limit on how many processes a sandbox's commands may have at once, so that a fork bomb in a
// tool stops at it instead of filling the runner's process table. The kernel's pids controller
// does it: a cgroup of the sandbox's own below oc-exec's, where one can be made (root on cgroup v1,
// a delegated cgroup v2 tree); every wrapped command enters it before it starts, so all it runs is
// counted (threads too: the controller counts tasks). Where none can be made, there is no limit:
// result.sandbox.process_limit is null and docs/sandbox.md says what still ends a turn's processes.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isAlive } from "../../sys/pids.js";

export type ProcessLimit = {
  /** The limit in force, or null when no pids cgroup could be made here. */
  max: number | null;
  /** The command as it starts inside the cgroup (as is, when there is none). */
  enter<T extends { file: string; args: string[] }>(command: T): T;
  /** Ends whatever is still in the cgroup and removes it. */
  close(): Promise<void>;
};

/** The default: far above what a build or a test run needs, far below a runner's own limit. */
export const DEFAULT_MAX_PROCESSES = 4096;

const NONE: ProcessLimit = { max: null, enter: (command) => command, close: async () => {} };

/**
 * Where this process's pids cgroup may be: each mount that can hold the controller (v1's pids
 * hierarchy, the unified v2 one) with our path in it, in mount order. A hybrid system has both,
 * and only one of them holds the controller.
 */
export function pidsCgroupDirs(mountinfo: string, cgroups: string): string[] {
  const dirs: string[] = [];
  const own = (match: (fields: string[]) => boolean) =>
    cgroups
      .split("\n")
      .map((line) => line.split(":"))
      .find(match)?.[2];
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const mountPoint = left.split(" ")[4]!;
    const [type, , options = ""] = right.split(" ");
    if (type === "cgroup" && options.split(",").includes("pids")) {
      const path = own((f) => f[1]!.split(",").includes("pids"));
      if (path !== undefined) dirs.push(join(mountPoint, path).replace(/(.)\/$/, "$1"));
    }
    if (type === "cgroup2") {
      const path = own((f) => f[0] === "0" && f[1] === "");
      if (path !== undefined) dirs.push(join(mountPoint, path).replace(/(.)\/$/, "$1"));
    }
  }
  return dirs;
}

export function openProcessLimit(max: number): ProcessLimit {
  if (process.platform !== "linux") return NONE;
  let parents: string[];
  try {
    parents = pidsCgroupDirs(readFileSync("/proc/self/mountinfo", "utf8"), readFileSync("/proc/self/cgroup", "utf8"));
  } catch {
    return NONE;
  }
  for (const parent of parents) {
    const limit = limitIn(parent, max);
    if (limit) return limit;
  }
  return NONE;
}

/** A cgroup of the sandbox's own below `parent` with the limit set, or null where that fails. */
function limitIn(parent: string, max: number): ProcessLimit | null {
  sweepDeadCgroups(parent);
  const dir = join(parent, `oc-exec-${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    mkdirSync(dir);
  } catch {
    return null;
  }
  try {
    // On cgroup v2 the file exists only where the parent hands the controller down.
    if (!existsSync(join(dir, "pids.max"))) throw new Error("no pids controller");
    writeFileSync(join(dir, "pids.max"), String(max));
  } catch {
    void removeCgroup(dir);
    return null;
  }
  const procs = join(dir, "cgroup.procs");
  return {
    max,
    // The shell writes its own pid into the cgroup, then becomes the command: nothing it starts
    // can be outside. A write that fails stops the command (fails closed).
    enter: (command) => ({
      ...command,
      file: "/bin/sh",
      args: ["-c", 'echo $$ > "$0" && exec "$@"', procs, command.file, ...command.args],
    }),
    close: () => removeCgroup(dir),
  };
}

/** The cgroups of oc-exec processes killed outright (their sandbox never closed). */
function sweepDeadCgroups(parent: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^oc-exec-(\d+)-[0-9a-f]+$/.exec(name)?.[1];
    if (pid && !isAlive(Number(pid))) void removeCgroup(join(parent, name));
  }
}

/** Kills what is left in the cgroup (a tool that outlived the sandbox), then removes it. */
async function removeCgroup(dir: string): Promise<void> {
  for (let round = 0; round < 50; round++) {
    let pids: number[] = [];
    try {
      pids = readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
    } catch {
      // Gone already, or never filled.
    }
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Ended meanwhile.
      }
    }
    try {
      rmdirSync(dir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      // EBUSY while the killed processes are being reaped: a moment more.
      await sleep(20);
    }
  }
}
