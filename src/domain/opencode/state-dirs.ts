// Where opencode writes its own data, state and cache (XDG, else under HOME), and whether it can:
// an unwritable HOME made opencode fail at start with a raw EACCES (exit 1), which doctor blamed
// on the permission policy. Checked before a turn instead, naming the directory and the way out.
import { accessSync, constants, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { xdgHome } from "../../kernel/xdg.js";

/** The nearest existing directory at or above path. */
function existing(path: string): string {
  let dir = path;
  while (!existsSync(dir)) {
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return dir;
}

/** Why opencode could not write its data, state or cache here, or null when it can. */
export function opencodeStateProblem(env: NodeJS.ProcessEnv): string | null {
  for (const kind of ["data", "state", "cache"] as const) {
    const dir = join(xdgHome(env, kind), "opencode");
    const at = existing(dir);
    try {
      accessSync(at, constants.W_OK);
    } catch {
      const variable = `XDG_${kind.toUpperCase()}_HOME`;
      return `opencode writes its ${kind} to ${dir}, but ${at} is not writable: give HOME (or ${variable}) a writable directory`;
    }
  }
  return null;
}
