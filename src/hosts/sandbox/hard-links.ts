// A workspace file with more than one hard link shares its content with its other names, which may
// lie outside the workspace (a pnpm store restored from a cache, a file linked in by a setup step):
// writing it in the sandbox writes them. Such files are kept read-only in the sandbox, and the
// turn is told which. `find` (C, one pass, no link followed, no other file system) does the scan.
import { spawn } from "node:child_process";
import { join, relative, sep } from "node:path";

/** More files than this are kept read-only by their top directories, not one bind each. */
const MAX_BINDS = 256;

/**
 * The regular files under the directories with more than one link, `.git` aside (it is read-only
 * whole). Started early and awaited late: the scan of a large node_modules (~0.1 s for 50,000
 * files here) runs beside the sandbox's other set-up.
 */
export function hardLinkedFiles(dirs: readonly string[]): Promise<string[]> {
  return Promise.all(
    dirs.map(
      (dir) =>
        new Promise<string[]>((resolve) => {
          const args = [dir, "-xdev", "(", "-path", join(dir, ".git"), "-prune", ")", "-o", "-type", "f"];
          const find = spawn("find", [...args, "-links", "+1", "-print0"], { stdio: ["ignore", "pipe", "ignore"] });
          let out = "";
          find.stdout.setEncoding("utf8");
          find.stdout.on("data", (chunk: string) => (out += chunk));
          find.on("error", () => resolve([]));
          find.on("close", () => resolve(out.split("\0").filter(Boolean)));
        }),
    ),
  ).then((lists) => [...new Set(lists.flat())].sort());
}

/**
 * What to keep read-only for those files: each file, or, when there are too many to bind one by
 * one (a linked node_modules), each top directory of the workspace that holds them.
 */
export function readOnlyForLinks(files: readonly string[], workspace: string): string[] {
  if (files.length <= MAX_BINDS) return [...files];
  const tops = new Set<string>();
  for (const file of files) {
    const first = relative(workspace, file).split(sep)[0]!;
    tops.add(join(workspace, first));
  }
  return [...tops].sort();
}
