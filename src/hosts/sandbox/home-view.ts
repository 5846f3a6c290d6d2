// What a sandboxed turn sees of the real HOME: nothing, unless it is on a short list. A deny list
// of secret stores always misses one (~/.pypirc, ~/.cargo/credentials.toml, keyrings, a shell's
// history, …), so the whole HOME is hidden (the library mounts an empty, writable tmpfs over it,
// gone when the sandboxed process ends) and only what a turn needs is bound back, read-only: the
// workspace and the --writable/--readable paths, opencode's configuration, and the toolchains that
// live in HOME. The same for the XDG directories when they live elsewhere, and for the file
// GOOGLE_APPLICATION_CREDENTIALS names. Pure: the environment and the paths in, two lists out.
import { homedir } from "node:os";
import { isAbsolute, join, relative, sep } from "node:path";
import { opencodeConfigDir } from "../../domain/opencode/config-sources.js";
import { ocExecStateDir } from "../../kernel/state-dir.js";
import { xdgHome } from "../../kernel/xdg.js";

/**
 * Toolchains installed under HOME, shown read-only (documented in docs/sandbox.md). Their own
 * caches and credentials stay hidden: ~/.cargo/bin, not ~/.cargo (credentials.toml lives there).
 */
const HOME_TOOLCHAINS = [
  ".cargo/bin",
  ".rustup",
  ".nvm",
  ".pyenv",
  ".rbenv",
  ".local/bin",
  ".local/lib",
  "go",
  ".bun/bin",
  ".deno/bin",
  ".volta",
  ".npm-global",
  ".asdf",
  ".local/share/mise",
  ".sdkman/candidates",
  ".opencode/bin",
] as const;

/** Secret stores kept hidden even under a --readable path that contains them. */
const SECRET_STORES = [
  ".ssh",
  ".aws",
  ".config/gcloud",
  ".azure",
  ".kube",
  ".docker",
  ".config/gh",
  ".npmrc",
  ".netrc",
  ".git-credentials",
  ".gnupg",
  ".pgpass",
] as const;

export type HomeView = { denyRead: string[]; allowRead: string[] };

const within = (path: string, dir: string) => {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
};

/**
 * The sandbox's view of HOME. `shownPaths`: the workspace and the paths the turn names
 * (--writable, --readable), which stay visible wherever they are.
 */
export function homeView(
  env: NodeJS.ProcessEnv,
  shownPaths: readonly string[],
  readable: readonly string[],
  exists: (path: string) => boolean,
): HomeView {
  const home = env.HOME || homedir();
  const xdg = (["config", "data", "state", "cache"] as const).map((kind) => xdgHome(env, kind));
  const credentials = env.GOOGLE_APPLICATION_CREDENTIALS;
  const hidden = [
    // Relocated XDG directories hold what ~/.config and ~/.local do (gh's hosts.yml, keyrings).
    ...xdg.filter((dir) => !within(dir, home)),
    // oc-exec's own state: its server records keep the URLs and passwords of its servers, and the
    // proxy's CA key is there.
    ocExecStateDir(env),
    ...SECRET_STORES.map((p) => join(home, p)),
    ...(credentials && isAbsolute(credentials) && !readable.some((r) => within(credentials, r)) ? [credentials] : []),
  ].filter(exists);
  // PATH's directories under HOME: the toolchains this machine actually uses.
  const onPath = (env.PATH ?? "").split(":").filter((dir) => isAbsolute(dir) && dir !== home && within(dir, home));
  const shown = [
    ...shownPaths,
    opencodeConfigDir(env),
    // The real cache, which seeds the sandbox's own (private-state.ts): the provider packages.
    join(xdgHome(env, "cache"), "opencode"),
    ...(env.OPENCODE_CONFIG ? [env.OPENCODE_CONFIG] : []),
    ...(env.OPENCODE_CONFIG_DIR ? [env.OPENCODE_CONFIG_DIR] : []),
    ...HOME_TOOLCHAINS.map((p) => join(home, p)).filter(exists),
    ...onPath.filter(exists),
  ];
  return { denyRead: [...new Set([home, ...hidden])], allowRead: [...new Set(shown)] };
}
