// opencode's data, state and cache as a sandboxed opencode has them: directories of its own, kept
// apart from the ones unsandboxed runs use. opencode's data directory holds its snapshot repository,
// a git repository whose config and hooks the next opencode runs (core.fsmonitor, a clean filter,
// post-index-change): written from a sandbox and read by an unsandboxed run, it would run the
// agent's code outside. Sandboxed turns share these among themselves, so sessions continue across
// them (--session, --continue, retries, --verify rounds, servers).
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { ocExecStateDir } from "../../kernel/state-dir.js";
import { xdgHome } from "../../kernel/xdg.js";

/** The sandbox-only area, inside oc-exec's own state (which no sandbox reads but this). */
export const privateStateRoot = (env: NodeJS.ProcessEnv) => join(ocExecStateDir(env), "sandbox-opencode");

/** The XDG variables that point a sandboxed opencode at its own directories. */
export function privateXdg(
  env: NodeJS.ProcessEnv,
): Record<"XDG_DATA_HOME" | "XDG_STATE_HOME" | "XDG_CACHE_HOME", string> {
  const root = privateStateRoot(env);
  return {
    XDG_DATA_HOME: join(root, "data"),
    XDG_STATE_HOME: join(root, "state"),
    XDG_CACHE_HOME: join(root, "cache"),
  };
}

/**
 * Makes the private directories, and seeds the private cache from the real one (the provider
 * packages opencode installed, so a sandboxed turn needs no registry): a directory is linked
 * (read-only inside: the real cache is only shown, never writable), a file copied. What is already
 * there is left alone. The area is written by sandboxes, so nothing here follows a link: an entry
 * is only ever made where there is none (O_EXCL), never written through.
 */
export function preparePrivateState(env: NodeJS.ProcessEnv): void {
  const xdg = privateXdg(env);
  mkdirSync(ocExecStateDir(env), { recursive: true, mode: 0o700 });
  for (const dir of Object.values(xdg)) {
    // A link a sandbox left in place of a directory is removed, not followed.
    for (const path of [dir, join(dir, "opencode")]) {
      const stat = lstatOrNull(path);
      if (stat && !stat.isDirectory()) rmSync(path, { force: true });
      if (!stat?.isDirectory()) mkdirSync(path, { recursive: true });
    }
  }
  const real = join(xdgHome(env, "cache"), "opencode");
  const own = join(xdg.XDG_CACHE_HOME, "opencode");
  if (!existsSync(real) || !lstatSync(own).isDirectory()) return;
  for (const entry of readdirSync(real, { withFileTypes: true })) {
    const target = join(own, entry.name);
    if (lstatOrNull(target)) continue;
    try {
      if (entry.isDirectory()) symlinkSync(join(real, entry.name), target);
      else if (entry.isFile()) writeFileSync(target, readFileSync(join(real, entry.name)), { flag: "wx" });
    } catch {
      // Made meanwhile by a turn running now, or unreadable: opencode does without the seed.
    }
  }
}

const lstatOrNull = (path: string) => {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
};
