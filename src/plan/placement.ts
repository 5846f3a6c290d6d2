// Where a turn runs, resolved once: the host (this machine's opencode, a server, an ssh host, an ACP
// agent, a warm server), the sandbox around it, the workspace and the environment. A host is made
// from this value alone (hosts/make-backend.ts); the session and the turn are resolved beside it.
import { resolve } from "node:path";
import { type ConfigContent, mergeConfigContent } from "../domain/opencode/config-content.js";
import { type TurnPolicy, turnPolicy } from "../domain/opencode/permissions.js";
import { ConfigError } from "../domain/outcome/errors.js";
import { API_LABELS, type OptionLabels } from "../domain/outcome/labels.js";
import { type Limit, parseDuration } from "../kernel/duration.js";
import { readEnvironment } from "../kernel/environment.js";
import { ACP_SANDBOX_NEEDS, type AcpSpec, resolveAcp } from "./acp-spec.js";
import { checkers } from "./checks.js";
import { DEFAULTS, type RunTurnOptions } from "./options.js";
import { SANDBOX_MODES, type SandboxSpec, writableProblem } from "./sandbox-spec.js";
import { destinationProblem, type SshSpec } from "./ssh-spec.js";

export type Placement = {
  /** An explicitly chosen binary (option or $OC_EXEC_OPENCODE), else null: bundled, then PATH. */
  opencode: string | null;
  /** The ACP agent the turn runs through (hosts/acp/), or null. */
  acp: AcpSpec | null;
  /** A running opencode server's URL: the turn runs there (hosts/server/), not through `opencode run`. */
  attach: string | null;
  /** The host the turn runs on over ssh, or null for this machine. */
  ssh: SshSpec | null;
  /** The sandbox the turn runs in, or null for none. */
  sandbox: SandboxSpec | null;
  /** Run on a warm server that fits (or one started for it); and how long such a server idles. */
  warm: boolean;
  warmIdleMs: number;
  env: NodeJS.ProcessEnv;
  /** The workspace, absolute (over ssh, ssh.dir names the host's). */
  dir: string;
  config: Record<string, unknown>[];
  /** OPENCODE_CONFIG_CONTENT for opencode: the inherited value with `config` merged in, once. */
  opencodeConfig: ConfigContent;
  pure: boolean;
  /** The models a turn here may call (its model, then its fallback): a sandbox lets their providers through. */
  models: { model: string | null; fallback: string | null };
  /**
   * --allow/--deny (or the inherited OPENCODE_PERMISSION) as the one policy, or its problem: built
   * once, here, since an agent that serves every turn of the run (an ACP agent) runs under it.
   */
  policy: TurnPolicy;
  /** How long opencode (or the ssh connection) may take to start; null = no limit. */
  startupTimeout: Limit | null;
  /** What the caller calls the placement's options, for a host's messages. */
  names: Pick<OptionLabels, "attach" | "config" | "pure" | "ssh" | "acp" | "dir" | "allowHosts">;
};

/** The options that say where a turn runs. */
export type PlacementOptions = Pick<
  RunTurnOptions,
  | "opencode"
  | "acp"
  | "attach"
  | "ssh"
  | "sshOptions"
  | "sandbox"
  | "writable"
  | "readable"
  | "allowHosts"
  | "passEnv"
  | "warm"
  | "env"
  | "dir"
  | "config"
  | "pure"
  | "model"
  | "fallbackModel"
  | "startupTimeoutMs"
  | "allow"
  | "deny"
>;

/** Where the turn runs, checked: hosts that exclude each other are refused before anything runs. */
export function resolvePlacement(options: PlacementOptions, labels: OptionLabels = API_LABELS): Placement {
  const env = options.env ?? process.env;
  const own = readEnvironment(env);
  const attach = options.attach ?? null;
  const acpAsked = options.acp ?? own.acp;
  const acpName = options.acp !== undefined ? labels.acp : "OC_EXEC_ACP";
  const acp = acpAsked ? resolveAcp(acpAsked, acpName) : null;
  if (acp) {
    // An ACP agent is started for this turn (here, or on the --ssh host), or a warm one found
    // (--warm): a server is another way.
    if (attach !== null)
      throw new ConfigError(
        `${acpName} runs the turn through an agent started for it; it cannot go with ${labels.attach}`,
        "UsageError",
      );
  }
  // --warm finds or starts a server of its own; --attach names one: together they say two things.
  if (attach !== null && options.warm)
    throw new ConfigError(
      `${labels.warm} finds or starts a server of its own and ${labels.attach} names one: give one`,
      "UsageError",
    );
  const warm = attach === null && (options.warm ?? own.warm);
  const ssh = resolveSsh(options, labels, own.sshConfig);
  const sandbox = resolveSandbox(ssh ? { ...options, passEnv: undefined } : options, env, labels);
  // Never a turn run unsandboxed because it went through another agent: opencode and the agents
  // whose needs the table knows (acp-spec.ts) run in the sandbox; any other is refused.
  if (acp && sandbox && acp.argv !== null && acp.sandbox === null)
    throw new ConfigError(
      `${acpName} ${acp.name} cannot run in a sandbox (${options.sandbox !== undefined ? labels.sandbox : "OC_EXEC_SANDBOX"}) yet: oc-exec confines only the agents whose needs it knows, by name (${sandboxedAgents()}); nothing was run`,
      "UsageError",
    );
  // Never a turn run unsandboxed because it went to another host: the sandbox is this machine's.
  if (ssh && sandbox)
    throw new ConfigError(
      `${labels.ssh} cannot be combined with a sandbox (${options.sandbox !== undefined ? labels.sandbox : "OC_EXEC_SANDBOX"}): the sandbox runs on this machine only`,
      "UsageError",
    );
  const startupMs = checkers(labels.startupTimeoutMs).duration(options.startupTimeoutMs ?? DEFAULTS.startupTimeoutMs);
  return {
    // OC_EXEC_OPENCODE names a binary here: over ssh only --opencode names one there.
    opencode: options.opencode ?? (ssh ? null : own.opencode),
    acp,
    attach,
    ssh,
    sandbox,
    warm,
    warmIdleMs: warmIdle(own.warmIdle),
    env,
    // Over ssh, --dir names a directory on the host: ssh.dir keeps it as given.
    dir: resolve(ssh ? DEFAULTS.dir : (options.dir ?? DEFAULTS.dir)),
    config: options.config ?? [],
    opencodeConfig: mergeConfigContent(env.OPENCODE_CONFIG_CONTENT, options.config ?? [], labels.config),
    pure: options.pure ?? false,
    models: { model: options.model ?? null, fallback: options.fallbackModel ?? null },
    policy: turnPolicy(options.allow ?? [], options.deny ?? [], env.OPENCODE_PERMISSION, labels),
    startupTimeout: startupMs === null ? null : { ms: startupMs, option: labels.startupTimeoutMs },
    names: {
      attach: labels.attach,
      config: labels.config,
      pure: labels.pure,
      ssh: labels.ssh,
      acp: labels.acp,
      dir: labels.dir,
      allowHosts: labels.allowHosts,
    },
  };
}

/** The built-in agents that run in a sandbox: opencode, and those whose needs the table knows. */
const sandboxedAgents = () => ["opencode", ...Object.keys(ACP_SANDBOX_NEEDS)].join(", ");

/** HOST or HOST:PORT; an IPv6 address in brackets. */
const HOST_ENTRY = /^(\*\.)?([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/;
const ENV_NAME = /^[A-Za-z_*][A-Za-z0-9_*]*$/;

/**
 * The sandbox asked for (the option, else OC_EXEC_SANDBOX), checked: a mode it knows, hosts and
 * names it can use, and no flag that would do nothing (the rule for every flag of another mode).
 * On a server (attach), the server's sandbox is what counts: its backend checks the two agree.
 */
export function resolveSandbox(
  options: Pick<RunTurnOptions, "sandbox" | "writable" | "readable" | "allowHosts" | "passEnv">,
  env: NodeJS.ProcessEnv,
  labels: Pick<OptionLabels, "sandbox" | "writable" | "readable" | "allowHosts" | "passEnv">,
): SandboxSpec | null {
  const fromEnv = env.OC_EXEC_SANDBOX?.trim() || undefined;
  const mode = options.sandbox ?? fromEnv ?? "off";
  const named = options.sandbox !== undefined ? labels.sandbox : "OC_EXEC_SANDBOX";
  if (!(SANDBOX_MODES as readonly string[]).includes(mode))
    throw new ConfigError(`${named} takes ${SANDBOX_MODES.join(", ")}, not ${JSON.stringify(mode)}`, "UsageError");
  const writable = options.writable ?? [];
  const readable = options.readable ?? [];
  const allowHosts = options.allowHosts ?? [];
  const passEnv = options.passEnv ?? [];
  if (mode === "off") {
    const idle = (
      [
        [writable, labels.writable],
        [readable, labels.readable],
        [allowHosts, labels.allowHosts],
        [passEnv, labels.passEnv],
      ] as const
    ).find(([list]) => list.length > 0);
    if (idle)
      throw new ConfigError(`${idle[1]} needs ${labels.sandbox}: without a sandbox it would do nothing`, "UsageError");
    return null;
  }
  if (mode === "read-only" && writable.length > 0)
    throw new ConfigError(
      `${labels.writable} needs ${labels.sandbox} workspace-write: read-only writes nowhere`,
      "UsageError",
    );
  const badHost = allowHosts.find((h) => !HOST_ENTRY.test(h));
  if (badHost)
    throw new ConfigError(`${labels.allowHosts} takes HOST or HOST:PORT, not ${JSON.stringify(badHost)}`, "UsageError");
  const badName = passEnv.find((n) => !ENV_NAME.test(n));
  if (badName)
    throw new ConfigError(
      `${labels.passEnv} takes a variable name or a pattern with *, not ${JSON.stringify(badName)}`,
      "UsageError",
    );
  const paths = writable.map((p) => resolve(p));
  for (const path of paths) {
    const problem = writableProblem(path, env);
    if (problem)
      throw new ConfigError(
        `${labels.writable} ${path} would let the agent write what runs outside the sandbox later: ${problem}`,
        "UsageError",
      );
  }
  return {
    mode: mode as SandboxSpec["mode"],
    writable: paths,
    readable: readable.map((p) => resolve(p)),
    allowHosts,
    passEnv,
  };
}

/** OC_EXEC_WARM_IDLE as milliseconds (0: never idle out), or the default. */
function warmIdle(text: string | null): number {
  if (text === null) return DEFAULTS.warmIdleMs;
  const ms = parseDuration(text);
  if (ms === null)
    throw new ConfigError(
      `OC_EXEC_WARM_IDLE takes a duration like 90s or 5m, not ${JSON.stringify(text)}`,
      "UsageError",
    );
  return ms;
}

/** The host over ssh, checked: a destination ssh takes, options as KEY=VALUE, nothing it cannot carry. */
export function resolveSsh(
  options: Pick<RunTurnOptions, "ssh" | "sshOptions" | "dir" | "passEnv" | "attach">,
  labels: OptionLabels,
  configFile: string | null,
): SshSpec | null {
  const destination = options.ssh;
  if (destination === undefined) {
    if ((options.sshOptions ?? []).length > 0)
      throw new ConfigError(
        `${labels.sshOptions} needs ${labels.ssh}: without a host it would do nothing`,
        "UsageError",
      );
    return null;
  }
  const problem = destinationProblem(destination);
  if (problem)
    throw new ConfigError(
      `${labels.ssh} takes [user@]host[:port] or a Host alias of your ssh config, not ${problem}: ${JSON.stringify(destination)}`,
      "UsageError",
    );
  const badOption = (options.sshOptions ?? []).find((o) => !/^[A-Za-z][A-Za-z0-9]*=/.test(o));
  if (badOption !== undefined)
    throw new ConfigError(`${labels.sshOptions} takes KEY=VALUE, not ${JSON.stringify(badOption)}`, "UsageError");
  // A server there is `server start --ssh`'s: refused rather than attached to here by mistake.
  if (options.attach !== undefined)
    throw new ConfigError(
      `${labels.ssh} cannot be combined with ${labels.attach} (a server there: oc-exec server start --ssh)`,
      "UsageError",
    );
  return {
    destination,
    options: options.sshOptions ?? [],
    configFile: configFile === null ? null : resolve(configFile),
    dir: options.dir ?? null,
    passEnv: options.passEnv ?? [],
  };
}
