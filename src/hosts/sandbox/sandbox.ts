// A sandbox made once per run: checks that the OS primitive works (fails closed: a problem, never a
// silent run without it), starts the library's filtering proxy, and wraps every opencode process
// of the run (the turn and the commands after it) so that it and everything it starts run inside.
// The library is @anthropic-ai/sandbox-runtime: bubblewrap, a network namespace with no way out but
// its proxy, seccomp against raw unix sockets (Linux); seatbelt (macOS).
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { ConfigSource } from "../../domain/opencode/config-sources.js";
import { readEnvironment } from "../../kernel/environment.js";
import type { LaunchProblem, Warning } from "../../kernel/problem.js";
import { opencodeDirs, type SandboxSpec } from "../../plan/sandbox-spec.js";
import { gitLinks } from "../../sys/git-list.js";
import { ownTempDir } from "../../sys/own-temp.js";
import { isAlive } from "../../sys/pids.js";
import { writeFileSafely } from "../../sys/safe-write.js";
import { gitConfigCredentials } from "./git-credentials.js";
import { hardLinkedFiles, readOnlyForLinks } from "./hard-links.js";
import { withInboundBridge } from "./inbound.js";
import { keyInHeaderOnly } from "./key-in-header.js";
import {
  AUTH_VARIABLE,
  OPENCODE_GITIGNORE,
  authStore as opencodeAuthStore,
  runtimeConfig,
  sandboxEnv,
  shellQuote,
  terminatedHosts,
} from "./policy.js";
import { preparePrivateState, privateXdg } from "./private-state.js";
import { DEFAULT_MAX_PROCESSES, openProcessLimit } from "./process-limit.js";
import { modelsNeeds, type ProviderNeeds, untrustedConfigProblems } from "./providers.js";
import { keepLeaves, sandboxCa, seedLeaves } from "./proxy-ca.js";
import { noDelayOnAccept, socatWithoutDelay } from "./relays.js";

/** What run.started and result say of the sandbox (snake_case: it goes into events as is). */
export type SandboxInfo = {
  mode: SandboxSpec["mode"];
  writable: string[];
  allowed_hosts: string[];
  /** How many processes its commands may have at once; null where no pids cgroup could be made. */
  process_limit?: number | null;
};

export type Launch = {
  file: string;
  args: string[];
  env: Record<string, string>;
  /**
   * Ports on the sandbox's own loopback the command reaches directly, not through the proxy: a
   * server of its own inside (`opencode acp` speaks to the one it starts). Nothing outside listens there.
   */
  ownLoopback?: readonly number[];
  /** Variables besides TMPDIR that the command takes its temporary directory from: the sandbox's own. */
  tmpVars?: readonly string[];
};

export type Sandbox = {
  info: SandboxInfo;
  /**
   * The command as it runs inside the sandbox, with the sandbox's environment; id names its
   * refusals. With inbound, a server inside listens on that port: `inboundSocket` leads to it.
   */
  wrap(command: Launch, id: string, inbound?: { port: number }): Promise<Launch>;
  /** The unix socket (a host path) that leads to the inbound port of a wrapped server. */
  inboundSocket: string;
  /** What every turn in it is told (files kept read-only). */
  warnings: Warning[];
  /** The connections the proxy refused to the command with this id, as host:port, in order. */
  refused(id: string): string[];
  /** Calls back with the command's refusals (all of them, in order) whenever the proxy refuses one. */
  onRefused(id: string, listener: (hosts: string[]) => void): () => void;
  close(): Promise<void>;
};

const INSTALL_HINT =
  "install bubblewrap, socat and ripgrep (Debian/Ubuntu: sudo apt-get install -y bubblewrap socat ripgrep)";
const USERNS_HINT =
  "user namespaces are refused here: on Ubuntu 24.04 (GitHub's ubuntu-latest) run `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; in a container, run it with --privileged or allow unshare";

type Library = typeof import("@anthropic-ai/sandbox-runtime");

/** Why no sandbox can be set up on this machine, or null when one can (doctor says this too). */
export async function sandboxUnavailable(env: NodeJS.ProcessEnv): Promise<string | null> {
  if (process.platform !== "linux" && process.platform !== "darwin")
    return `the sandbox needs Linux or macOS; this is ${process.platform}`;
  const { SandboxManager } = await import("@anthropic-ai/sandbox-runtime");
  const deps = await withPath(env, () => SandboxManager.checkDependencies());
  if (deps.errors.length > 0) return `${deps.errors.join(", ")}: ${INSTALL_HINT}`;
  if (process.platform === "linux") {
    // The library checks that bwrap exists, not that the kernel lets it make a namespace.
    const probe = spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-net", "--unshare-user-try", "true"], {
      env: { PATH: env.PATH ?? "/usr/bin:/bin" },
      encoding: "utf8",
      timeout: 10_000,
    });
    if (probe.status !== 0)
      return `bubblewrap cannot create a sandbox here (${(probe.stderr || probe.error?.message || `exit ${probe.status}`).trim()}): ${USERNS_HINT}`;
  }
  return null;
}

/** The library reads PATH from oc-exec's own environment; the run's environment is what counts. */
const withPath = <T>(env: NodeJS.ProcessEnv, f: () => T | Promise<T>) => withHostEnv(env, [], f);

/**
 * The library reads PATH and the masked credentials' real values from oc-exec's own environment:
 * the run's values are put there while it does, and the process's own put back after.
 */
async function withHostEnv<T>(env: NodeJS.ProcessEnv, names: string[], f: () => T | Promise<T>): Promise<T> {
  const saved = new Map(["PATH", ...names].map((name) => [name, process.env[name]]));
  for (const name of saved.keys()) {
    const value = name === "PATH" ? (env.PATH ?? saved.get("PATH")) : env[name];
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  try {
    return await f();
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/**
 * The library keeps the files that would run code later (`.bashrc`, `.gitmodules`, `.vscode/`,
 * `.idea/`, `.mcp.json`, `.git/hooks` of repositories nested 3 deep, …) read-only in
 * process.cwd(), the directory it expects the command to run in, and scans it for them. A turn
 * runs in its workspace, which is not oc-exec's own directory when --dir names another: the
 * library is run from there while it builds the command.
 */
async function inDirectory<T>(dir: string, f: () => Promise<T>): Promise<T> {
  const before = process.cwd();
  if (before === dir) return f();
  process.chdir(dir);
  try {
    return await f();
  } finally {
    process.chdir(before);
  }
}

/** Only one sandbox at a time per process: the library's manager is global. */
let active = false;

export async function openSandbox(
  spec: SandboxSpec,
  context: {
    workspace: string;
    env: NodeJS.ProcessEnv;
    /** The models its turns may use (null: opencode's configured one): their providers get through. */
    models: (string | null)[];
    configs: ConfigSource[];
    /**
     * For an ACP agent that is not opencode: what it needs through the proxy (providers.ts's
     * agentNeeds), instead of what opencode's configuration and the models say; opencode's own
     * key store is not passed in.
     */
    agent?: ProviderNeeds;
    /**
     * Directories of the workspace the agent reads its configuration from (hooks, MCP servers: code a
     * later run outside the sandbox would run), kept read-only in workspace-write and made to exist
     * beforehand, as `.opencode` is.
     */
    protect?: readonly string[];
  },
): Promise<{ sandbox: Sandbox } | { problem: LaunchProblem }> {
  // Checked first: a configuration error, whatever the machine can do.
  const untrusted = untrustedConfigProblems(context.configs, context.workspace);
  if (untrusted.length > 0)
    return {
      problem: {
        name: "SandboxConfigError",
        message: `--sandbox ${spec.mode} refuses the workspace's opencode configuration: ${untrusted.join("; ")}. Under a sandbox the providers, small_model and remote MCP servers come from your own configuration (~/.config/opencode, OPENCODE_CONFIG, OPENCODE_CONFIG_CONTENT, --config, -m), never from files the workspace carries, since a pull request writes those: move them there, or remove them from the workspace`,
      },
    };
  // Only what the sandbox may write can be written through: the workspace and --writable.
  const links =
    spec.mode === "workspace-write" ? hardLinkedFiles([context.workspace, ...spec.writable]) : Promise.resolve([]);
  const unavailable = await sandboxUnavailable(context.env);
  if (unavailable)
    return {
      problem: { name: "SandboxUnavailable", message: `--sandbox ${spec.mode} cannot be set up: ${unavailable}` },
    };
  const needs = context.agent ?? modelsNeeds(context.configs, context.models);
  if (needs.problems.length > 0 && spec.allowHosts.length === 0)
    return { problem: { name: "SandboxConfigError", message: needs.problems.join("; ") } };
  const maxProcesses = processLimitOf(context.env);
  if (typeof maxProcesses === "string") return { problem: { name: "SandboxConfigError", message: maxProcesses } };
  if (active) return { problem: { name: "SandboxBusy", message: "another sandbox is open in this process" } };
  // Taken before the first await, so two runs starting at once cannot both set the library up.
  active = true;
  const { SandboxManager } = (await import("@anthropic-ai/sandbox-runtime")) as Library;
  await sweepDeadProxySockets();
  const tmp = ownTempDir("sandbox");
  // The providers' keys set here never enter the sandbox: it gets a stand-in for each (Linux; the
  // library reads the real values from this process's environment, hostEnv below).
  const linux = process.platform === "linux";
  const masked = linux ? needs.credentials.filter((c) => context.env[c.name]) : [];
  // So are the keys of opencode's own key store (its file, or the variable that replaces it).
  const found = context.agent ? null : opencodeAuthStore(context.env, needs.providers, readText);
  const authStore = found && { ...found, masked: found.masked && linux };
  // And the token actions/checkout leaves in the repository's config.
  const gitConfig = gitConfigCredentials(context.workspace, readText, isDirectory);
  const terminated = terminatedHosts(masked, authStore);
  const linked = await links;
  const warnings: Warning[] =
    linked.length > 0
      ? [
          {
            code: "sandbox_read_only_links",
            message: `${linked.length} file${linked.length === 1 ? "" : "s"} with other hard links ${linked.length === 1 ? "is" : "are"} kept read-only in the sandbox (writing ${linked.length === 1 ? "it" : "one"} would change ${linked.length === 1 ? "its" : "their"} other names too): ${linked
              .slice(0, 10)
              .map((f) => relative(context.workspace, f) || f)
              .join(", ")}${linked.length > 10 ? `, and ${linked.length - 10} more` : ""}`,
          },
        ]
      : [];
  const protectedDirs =
    spec.mode === "workspace-write" ? (context.protect ?? []).map((dir) => join(context.workspace, dir)) : [];
  const config = runtimeConfig({
    spec,
    workspace: context.workspace,
    env: context.env,
    tmp,
    hosts: needs.hosts,
    exists: existsSync,
    read: readText,
    // The top's git status enters each submodule (git-paths.ts): its .git is kept read-only.
    gitlinks: () => gitLinks(context.workspace, context.env, { timeoutMs: 30_000 }),
    masked,
    ca: terminated.length > 0 ? await sandboxCa(context.env) : null,
    socat: linux ? socatWithoutDelay() : null,
    authStore,
    gitConfig,
    readOnly: [...readOnlyForLinks(linked, context.workspace), ...protectedDirs],
  });
  const limit = openProcessLimit(maxProcesses);
  const maskedVars = [...masked.map((c) => c.name), ...(authStore?.masked ? [AUTH_VARIABLE] : [])];
  // The library reads the key store's real text from this process's environment, as it does a key's.
  const realEnv = authStore ? { ...context.env, [AUTH_VARIABLE]: authStore.content } : context.env;
  const hostEnv = <T>(f: () => T | Promise<T>) => withHostEnv(realEnv, maskedVars, f);
  // opencode's data, state and cache inside: the sandbox's own (private-state.ts).
  const ownState = privateXdg(context.env);
  // The real keys go into the credential headers of requests to their providers only, never into a
  // body or another header (key-in-header.ts): before the proxy forwards its first request.
  const narrowed = keyInHeaderOnly(SandboxManager.getSentinelRegistry());
  const failed = async (message: string) => {
    if ("restore" in narrowed) narrowed.restore();
    active = false;
    rmSync(tmp, { recursive: true, force: true });
    await limit.close();
    return { problem: { name: "SandboxUnavailable", message: `--sandbox ${spec.mode} cannot be set up: ${message}` } };
  };
  if ("problem" in narrowed) return failed(narrowed.problem);
  try {
    prepareOpencodeDirs(context.env, context.workspace);
    for (const dir of protectedDirs) prepareProtectedDir(dir);
    await hostEnv(() => SandboxManager.initialize(config));
  } catch (error) {
    return failed((error as Error).message);
  }
  // The leaves kept from earlier sandboxes spare the first model call the making of a key.
  const proxyCa = SandboxManager.getMitmCA();
  const seeded = proxyCa ? seedLeaves(context.env, proxyCa, terminated) : [];
  const proxyPort = SandboxManager.getProxyPort();
  const stopNoDelay = proxyPort === undefined ? () => {} : noDelayOnAccept(proxyPort);
  const store = SandboxManager.getSandboxViolationStore();
  const refusedTo = (id: string) => {
    const hosts: string[] = [];
    for (const v of store.getViolationsForCommand(id)) {
      const m = /deny network-outbound (\S+)/.exec(v.line);
      if (m) hosts.push(m[1]!);
    }
    return hosts;
  };
  const inboundSocket = join(tmp, "server.sock");
  return {
    sandbox: {
      info: {
        mode: spec.mode,
        writable: config.filesystem.allowWrite,
        allowed_hosts: config.network.allowedDomains,
        process_limit: limit.max,
      },
      inboundSocket,
      warnings,
      async wrap(command, id, inbound) {
        // The library points the sandbox at its proxy but exempts loopback; a provider on loopback
        // must go through the proxy too (the namespace has its own, empty loopback). It also sets
        // TMPDIR to its shared /tmp/claude; the turn gets its private one, removed at close (opencode
        // leaves a 5.5 MB library in TMPDIR at every start).
        const inner = [
          "exec",
          "env",
          "-u",
          "NO_PROXY",
          "-u",
          "no_proxy",
          ...ownLoopback(command.ownLoopback ?? []),
          `TMPDIR=${tmp}`,
          ...(command.tmpVars ?? []).map((name) => `${name}=${tmp}`),
          command.file,
          ...command.args,
        ]
          .map(shellQuote)
          .join(" ");
        const wrapped = await hostEnv(() =>
          inDirectory(context.workspace, () =>
            SandboxManager.wrapWithSandboxArgv(inner, undefined, undefined, undefined, undefined, { commandId: id }),
          ),
        );
        const argv = [...wrapped.argv];
        if (inbound) {
          const bridged = withInboundBridge(argv[argv.length - 1]!, inboundSocket, inbound.port);
          // Fails closed: a library release whose command has another shape gets no way in.
          if (bridged === null) throw new Error("the sandbox library's command has an unexpected shape");
          argv[argv.length - 1] = bridged;
        }
        return limit.enter({
          file: argv[0]!,
          args: argv.slice(1),
          // A credential variable passes as is only when not masked; the library sets the stand-in.
          env: {
            ...sandboxEnv(command.env, {
              credentialVars: needs.credentialVars,
              passEnv: spec.passEnv,
              tmp,
              masked: maskedVars,
            }),
            ...ownState,
            // Unmasked (no provider to send a key to, OAuth only, or not Linux): as it is.
            ...(authStore && !authStore.masked ? { [AUTH_VARIABLE]: authStore.content } : {}),
          },
        });
      },
      refused: refusedTo,
      onRefused(id, listener) {
        let seen = 0;
        return store.subscribe(() => {
          const hosts = refusedTo(id);
          if (hosts.length === seen) return;
          seen = hosts.length;
          listener(hosts);
        });
      },
      async close() {
        try {
          if (proxyCa) keepLeaves(context.env, proxyCa, terminated, seeded);
          SandboxManager.cleanupAfterCommand();
          await SandboxManager.reset();
        } finally {
          narrowed.restore();
          stopNoDelay();
          active = false;
          rmSync(tmp, { recursive: true, force: true });
          await limit.close();
        }
      },
    },
  };
}

/** OC_EXEC_SANDBOX_MAX_PROCESSES as a number (at least 64: opencode's runtime alone has dozens of threads), or why not. */
function processLimitOf(env: NodeJS.ProcessEnv): number | string {
  const text = readEnvironment(env).sandboxMaxProcesses;
  if (text === null) return DEFAULT_MAX_PROCESSES;
  const n = Number(text);
  return Number.isInteger(n) && n >= 64
    ? n
    : `OC_EXEC_SANDBOX_MAX_PROCESSES takes a whole number of at least 64, not ${JSON.stringify(text)}`;
}

const isDirectory = (path: string) => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** A file's text, or null when it cannot be read (missing, a directory, no permission). */
function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/**
 * The library's proxy sockets in the temporary directory outlive a process killed outright.
 * `srt-mux-PID-N.sock` name their process: removed when it is gone. `claude-http-*.sock` (and
 * `claude-socks-*`) do not: removed when nobody listens any more (connecting is refused); one that
 * answers belongs to a live sandbox, ours or another program's.
 */
async function sweepDeadProxySockets(): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^srt-mux-(\d+)-\w+\.sock$/.exec(name)?.[1];
    if (pid && !isAlive(Number(pid))) rmSync(join(tmpdir(), name), { force: true });
  }
  names = names.filter((n) => /^claude-(http|socks)-[\w-]+\.sock$/.test(n));
  await Promise.all(
    names.map(
      (name) =>
        new Promise<void>((resolve) => {
          const path = join(tmpdir(), name);
          const socket = connect({ path });
          socket.once("connect", () => {
            socket.destroy();
            resolve();
          });
          socket.once("error", (error: NodeJS.ErrnoException) => {
            if (error.code === "ECONNREFUSED") rmSync(path, { force: true });
            resolve();
          });
        }),
    ),
  );
}

/**
 * opencode creates its directories at start, and cannot inside: its state directories (the
 * sandbox's own) must exist before, and the .gitignore it writes into each .opencode directory it
 * reads (its own config directory's, the workspace's) must already be there, since both are
 * read-only inside. The workspace's .opencode/.gitignore names itself, so git shows nothing new.
 */
function prepareOpencodeDirs(env: NodeJS.ProcessEnv, workspace: string): void {
  preparePrivateState(env);
  const config = opencodeDirs(env).config;
  for (const dir of [config, join(workspace, ".opencode")]) {
    mkdirSync(dir, { recursive: true });
    const ignore = join(dir, ".gitignore");
    // A link there (a dangling one could come with the checkout) is not written through: opencode
    // then says it cannot write the file (sys/safe-write.ts).
    if (!existsSync(ignore)) writeFileSafely(ignore, OPENCODE_GITIGNORE);
  }
}

/** NO_PROXY (both spellings) naming the command's own loopback ports, each with its port. */
function ownLoopback(ports: readonly number[]): string[] {
  if (ports.length === 0) return [];
  const hosts = ports.flatMap((p) => [`127.0.0.1:${p}`, `localhost:${p}`]).join(",");
  return [`NO_PROXY=${hosts}`, `no_proxy=${hosts}`];
}

/**
 * A directory the agent may not write, made to exist (a missing one could be created inside and
 * read by a later run outside), with a .gitignore that names only itself so git shows nothing new.
 */
function prepareProtectedDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const ignore = join(dir, ".gitignore");
  if (!existsSync(ignore)) writeFileSafely(ignore, ".gitignore\n");
}

export const newCommandId = () => `oc-exec-${randomUUID()}`;
