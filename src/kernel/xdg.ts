// The XDG base directories, as opencode and oc-exec both place their files: the variable when set,
// else its default under HOME. One place, so oc-exec's server records and version cache, opencode's
// config and the sandbox's view of opencode's state all agree on where they are.
import { homedir } from "node:os";
import { join } from "node:path";

const DEFAULTS = {
  config: { variable: "XDG_CONFIG_HOME", under: [".config"] },
  data: { variable: "XDG_DATA_HOME", under: [".local", "share"] },
  state: { variable: "XDG_STATE_HOME", under: [".local", "state"] },
  cache: { variable: "XDG_CACHE_HOME", under: [".cache"] },
} as const;

export function xdgHome(env: NodeJS.ProcessEnv, kind: keyof typeof DEFAULTS): string {
  const { variable, under } = DEFAULTS[kind];
  return env[variable] || join(env.HOME || homedir(), ...under);
}
