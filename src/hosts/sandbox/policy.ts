// What a sandboxed turn may read, write and reach, and the environment it gets, as data for the
// sandbox library. Pure: the mode, the paths and the hosts in, the library's configuration out.
//
// Reads: the system, the workspace, and of HOME only what home-view.ts lists (opencode's
// configuration, the toolchains, --readable paths): HOME itself is an empty, writable, throwaway
// directory inside. Writes: a private temporary directory and opencode's own state, the sandbox's
// own (private-state.ts), never the state unsandboxed runs use; plus the workspace and --writable
// paths in workspace-write. opencode's configuration stays read-only, in the workspace too, so what
// the agent writes there cannot run in a later, unsandboxed turn.
// Network: the allow-list only, through the library's proxy; the namespace has no other way out.
import { join } from "node:path";
import { opencodeDirs, type SandboxSpec } from "../../plan/sandbox-spec.js";
import { GIT_CREDENTIAL, type GitConfigCredentials } from "./git-credentials.js";
import { gitProtectedPaths } from "./git-paths.js";
import { homeView } from "./home-view.js";
import { privateStateRoot } from "./private-state.js";
import type { ProviderCredential, ProviderHosts } from "./providers.js";

/**
 * Workspace paths the agent must not write even in workspace-write: config that runs code later
 * (git's repository is gitProtectedPaths').
 */
const PROTECTED_IN_WORKSPACE = ["opencode.json", "opencode.jsonc", ".opencode"] as const;

/** What opencode writes into a .opencode directory (its own and the workspace's) when it is missing. */
export const OPENCODE_GITIGNORE = "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore";

export type SandboxLayout = {
  spec: SandboxSpec;
  /** Whether a path exists now (the library covers a missing path differently). */
  exists: (path: string) => boolean;
  /** A file's text, or null (git's `.git` file and config name more of what to protect). */
  read?: (path: string) => string | null;
  /** The submodules (gitlinks) git's index lists under the workspace, relative to it. */
  gitlinks?: () => string[];
  workspace: string;
  env: NodeJS.ProcessEnv;
  /** The private temporary directory (TMPDIR inside). */
  tmp: string;
  hosts: string[];
  /**
   * The providers' credential variables set in the environment: the sandbox sees a stand-in for
   * each, and the proxy puts the real value into requests to that provider's hosts only.
   */
  masked: readonly ProviderCredential[];
  /** The CA the proxy terminates TLS with (made once, kept outside every sandbox), when it must. */
  ca: { certPath: string; keyPath: string } | null;
  /** The socat the library runs its relays with (relays.ts); absent: the library's own choice. */
  socat?: string | null;
  /** opencode's key store (masked on Linux when it holds keys). */
  authStore?: AuthStore | null;
  /** The repository's config when it holds a credential (git-credentials.ts). */
  gitConfig?: GitConfigCredentials | null;
  /** Writable paths that must stay read-only: files with other hard links (hard-links.ts). */
  readOnly?: readonly string[];
};

/** `host` of a `host:port` entry: the library matches where a credential may go by host name. */
const hostName = (entry: string) => entry.replace(/:\d+$/, "");

/**
 * opencode's own key store as the sandboxed opencode gets it. Its file (auth.json in the data
 * directory, written by `opencode auth login`) is not where a sandboxed opencode looks: its data
 * directory is its own (private-state.ts). So the store comes in through the variable that
 * replaces the file, OPENCODE_AUTH_CONTENT: the variable's own value, else the file's text. Its
 * `"key"` values are masked like a key variable (the rest stays valid JSON for opencode) and sent
 * to the hosts of the turn's providers (the store does not say which key is whose). OAuth tokens
 * pass as they are (as they did in the file): the proxy cannot tell which header carries them.
 */
export type AuthStore = { content: string; masked: boolean; providers: ProviderHosts[] };
export const AUTH_VARIABLE = "OPENCODE_AUTH_CONTENT";
const AUTH_KEY = /"key"\s*:\s*"([^"\\]+)"/;

/** opencode's key store for the sandbox, given what is there (read: a file's text, or null). */
export function authStore(
  env: NodeJS.ProcessEnv,
  providers: ProviderHosts[],
  read: (path: string) => string | null,
): AuthStore | null {
  const content = env[AUTH_VARIABLE] || read(join(opencodeDirs(env).data, "auth.json"));
  if (!content) return null;
  return { content, masked: providers.length > 0 && AUTH_KEY.test(content), providers };
}

/** The hosts whose TLS the proxy terminates: those of the masked keys sent over TLS. */
export const terminatedHosts = (masked: readonly ProviderCredential[], auth: AuthStore | null = null) => [
  ...new Set([
    ...masked.filter((c) => c.tls).flatMap((c) => c.hosts.map(hostName)),
    ...(auth?.masked ? auth.providers : []).filter((p) => p.tls).flatMap((p) => p.hosts.map(hostName)),
  ]),
];

/** The library's configuration (its SandboxRuntimeConfig, the parts oc-exec sets). */
export function runtimeConfig(layout: SandboxLayout) {
  const { spec, workspace, env, tmp } = layout;
  const workspaceWrite = spec.mode === "workspace-write";
  const allowedDomains = [...new Set([...layout.hosts, ...spec.allowHosts])];
  // A stand-in sent over TLS can only be swapped by a proxy that terminates it: the proxy does so
  // for the hosts of masked credentials, with a CA of its own that the sandbox trusts, and only
  // for them (every other allowed host keeps its own certificate, end to end).
  const auth = layout.authStore?.masked ? layout.authStore : null;
  const terminated = new Set(terminatedHosts(layout.masked, auth));
  const authHosts = [...new Set((auth?.providers ?? []).flatMap((p) => p.hosts.map(hostName)))];
  const plaintext = layout.masked.some((c) => !c.tls) || (auth?.providers.some((p) => !p.tls) ?? false);
  const git = layout.gitConfig ?? null;
  const view = homeView(env, [workspace, ...spec.writable, ...spec.readable], spec.readable, layout.exists);
  return {
    network: {
      allowedDomains,
      deniedDomains: [],
      ...(terminated.size > 0
        ? {
            tlsTerminate: {
              ...(layout.ca ? { caCertPath: layout.ca.certPath, caKeyPath: layout.ca.keyPath } : {}),
              excludeDomains: [...new Set(allowedDomains.map(hostName))].filter((h) => !terminated.has(h)),
            },
          }
        : {}),
    },
    ...(layout.masked.length > 0 || auth || git?.file
      ? {
          credentials: {
            // A provider on plain HTTP (a local gateway) gets its key in the clear whoever adds it;
            // the library adds it to plaintext requests only when told so.
            ...(plaintext ? { allowPlaintextInject: true } : {}),
            envVars: [
              ...layout.masked.map((c) => ({
                name: c.name,
                mode: "mask" as const,
                injectHosts: [...new Set(c.hosts.map(hostName))],
              })),
              // Only the keys' values: group 1 of each match becomes a stand-in, the JSON around it stays.
              ...(auth
                ? [
                    {
                      name: AUTH_VARIABLE,
                      mode: "mask" as const,
                      extract: AUTH_KEY.source,
                      onExtractNoMatch: "deny" as const,
                      injectHosts: authHosts,
                    },
                  ]
                : []),
            ],
            // The repository's token: a stand-in that goes to no host (git's requests carry it
            // as it is); a file the pattern no longer matches is hidden rather than shown.
            ...(git?.file
              ? {
                  files: [
                    {
                      path: git.file,
                      mode: "mask" as const,
                      extract: GIT_CREDENTIAL,
                      onExtractNoMatch: "deny" as const,
                      injectHosts: [],
                    },
                  ],
                }
              : {}),
          },
        }
      : {}),
    ...(layout.socat ? { socatPath: layout.socat } : {}),
    filesystem: {
      denyRead: [...view.denyRead, ...(git?.includes.filter(layout.exists) ?? [])],
      allowRead: view.allowRead,
      allowWrite: [
        tmp,
        // opencode's data, state and cache: the sandbox's own, never the ones unsandboxed runs use.
        privateStateRoot(env),
        // opencode rewrites this one file of its config directory at every start.
        join(opencodeDirs(env).config, ".gitignore"),
        ...(workspaceWrite ? [workspace, ...spec.writable] : []),
      ],
      // A missing file is covered with /dev/null, which opencode reads as a broken config: only the
      // files that exist are protected (the docs say so); .opencode is made to exist beforehand.
      denyWrite: workspaceWrite
        ? [
            ...PROTECTED_IN_WORKSPACE.map((p) => join(workspace, p)).filter(
              (p) => p.endsWith(".opencode") || layout.exists(p),
            ),
            ...gitProtectedPaths(
              workspace,
              { exists: layout.exists, read: layout.read ?? (() => null), gitlinks: layout.gitlinks ?? (() => []) },
              spec.writable.includes(join(workspace, ".git")),
            ),
            ...(layout.readOnly ?? []),
          ]
        : [],
    },
  };
}

/** Variables every sandboxed turn keeps: what a shell, a toolchain and opencode need to run. */
const KEEP = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TZ",
  "COLORTERM",
  "NO_COLOR",
  "FORCE_COLOR",
  "CI",
];
const KEEP_PREFIXES = ["LC_", "XDG_", "OPENCODE_"];
/** A server's password is never handed to what the agent runs. */
const NEVER = new Set(["OPENCODE_SERVER_PASSWORD", "OPENCODE_SERVER_USERNAME"]);

/** One word for a POSIX shell, whatever it holds. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** `*` matches any run of characters; the rest is literal. */
export function envPattern(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
}

/**
 * The environment opencode and its tools get in the sandbox: the variables above, the chosen
 * providers' credential variables and what --pass-env names; TMPDIR is the private one. The
 * runner's other variables (GITHUB_TOKEN, NPM_TOKEN, AWS_*, …) stay outside.
 */
export function sandboxEnv(
  env: NodeJS.ProcessEnv,
  keep: {
    credentialVars: readonly string[];
    passEnv: readonly string[];
    tmp: string;
    /** Variables the library masks: their stand-ins are its to set, so they are never passed. */
    masked?: readonly string[];
  },
): Record<string, string> {
  const passed = keep.passEnv.map(envPattern);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || NEVER.has(name) || keep.masked?.includes(name)) continue;
    if (
      KEEP.includes(name) ||
      KEEP_PREFIXES.some((p) => name.startsWith(p)) ||
      keep.credentialVars.includes(name) ||
      passed.some((re) => re.test(name))
    )
      out[name] = value;
  }
  out.TMPDIR = keep.tmp;
  // models.dev is not an allowed host: opencode uses the model list it ships with, instead of a
  // refused fetch (and a sandbox_refused warning) at every start.
  out.OPENCODE_DISABLE_MODELS_FETCH ??= "true";
  return out;
}

/**
 * How a check (--verify) runs in a server's sandbox from another process: the supervisor, which
 * holds the sandbox, wraps one command that runs whatever OC_EXEC_CHECK says, and its record keeps
 * the result. The proxy it leads to lives as long as the server.
 */
export type SandboxCheck = { argv: string[]; tmp: string };

/** The command the supervisor wraps: the check it is given, in the sandbox's shell. */
export const CHECK_COMMAND = { file: "/bin/sh", args: ["-c", 'exec /bin/sh -c "$OC_EXEC_CHECK"'] };

/**
 * A check as it runs in a server's sandbox: the supervisor's wrapped command, with the caller's
 * environment as the sandbox lets it through (no secret the policy keeps out) and the check.
 */
export function sandboxedCheck(
  check: SandboxCheck,
  spec: Pick<SandboxSpec, "passEnv">,
  command: { file: string; args: string[]; env: NodeJS.ProcessEnv },
): { file: string; args: string[]; env: Record<string, string> } {
  return {
    file: check.argv[0]!,
    args: check.argv.slice(1),
    env: {
      // A check needs no model: opencode's key store stays with opencode.
      ...sandboxEnv(command.env, {
        credentialVars: [],
        passEnv: spec.passEnv,
        tmp: check.tmp,
        masked: [AUTH_VARIABLE],
      }),
      OC_EXEC_CHECK: [command.file, ...command.args].map(shellQuote).join(" "),
    },
  };
}

/** A server's sandbox as its record keeps it: the spec it was started with. */
export type ServerSandbox = { spec: SandboxSpec } | null;

/**
 * Why a turn that asks for this sandbox cannot run on this server, or null when it can. The
 * server's sandbox is the one its tools run in, whatever a turn asks: a turn runs on it when it
 * asks for the same sandbox or a weaker mode (workspace-write on a read-only server), never when
 * the server's is weaker than asked, differs in what it lets through, or is none at all.
 */
export function serverSandboxProblem(asked: SandboxSpec, server: ServerSandbox, url: string): string | null {
  if (!server)
    return `--sandbox ${asked.mode} cannot apply to the server at ${url}: it runs without a sandbox oc-exec set up, and its tools with it (start one with oc-exec server start --sandbox ${asked.mode})`;
  const { spec } = server;
  if (asked.mode === "read-only" && spec.mode === "workspace-write")
    return `--sandbox read-only cannot run on the server at ${url}: its sandbox is workspace-write, which lets the tools write the workspace`;
  const differs = (
    [
      // A read-only server writes none of what either names.
      ["--writable", spec.mode === "read-only" ? [] : asked.writable, spec.writable],
      ["--readable", asked.readable, spec.readable ?? []],
      ["--allow-host", asked.allowHosts, spec.allowHosts],
      ["--pass-env", asked.passEnv, spec.passEnv],
    ] as const
  ).find(([, a, b]) => [...a].sort().join("\n") !== [...b].sort().join("\n"));
  if (!differs) return null;
  const [flag, , theirs] = differs;
  return `the server at ${url} was started with ${theirs.length > 0 ? theirs.map((v) => `${flag} ${v}`).join(" ") : `no ${flag}`}, which this turn's sandbox does not match: give the server's sandbox flags, or start a server with this turn's`;
}
