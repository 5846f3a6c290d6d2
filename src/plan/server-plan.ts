// `oc-exec server start`, planned before anything starts: where the server runs (this machine, in
// the sandbox asked for, or an ssh host), its workspace, port and idle limit. Every option the
// caller cannot mean is refused here, named as the caller wrote it (a ConfigError: exit 5).
import { resolve } from "node:path";
import { ConfigError } from "../domain/outcome/errors.js";
import type { OptionLabels } from "../domain/outcome/labels.js";
import { readEnvironment } from "../kernel/environment.js";
import { notADirectory } from "../sys/fs-checks.js";
import type { RunTurnOptions } from "./options.js";
import { resolveSandbox, resolveSsh } from "./placement.js";
import type { SandboxSpec } from "./sandbox-spec.js";
import type { SshSpec } from "./ssh-spec.js";

export type ServerStartOptions = Pick<
  RunTurnOptions,
  "dir" | "opencode" | "model" | "ssh" | "sshOptions" | "sandbox" | "writable" | "readable" | "allowHosts" | "passEnv"
> & {
  /** How long the server waits without a turn before it stops itself; 0 = never. */
  idleTimeoutMs: number;
  /** The local port (0: a free one). */
  port?: number;
  env: NodeJS.ProcessEnv;
};

export type ServerPlan =
  | {
      where: "local";
      /** An explicit binary, else null (ensureOpencode finds one). */
      opencode: string | null;
      dir: string;
      port: number;
      idleTimeoutMs: number;
      sandbox: SandboxSpec | null;
      models: (string | null)[];
    }
  | {
      where: "ssh";
      /** The binary on the host (its PATH's opencode unless named). */
      opencode: string;
      ssh: SshSpec;
      idleTimeoutMs: number;
    };

export function planServerStart(options: ServerStartOptions, labels: OptionLabels): ServerPlan {
  const { env, idleTimeoutMs } = options;
  if (options.ssh !== undefined) {
    const ssh = resolveSsh(
      { ssh: options.ssh, sshOptions: options.sshOptions, dir: options.dir },
      labels,
      readEnvironment(env).sshConfig,
    )!;
    if (options.sandbox !== undefined || options.port !== undefined)
      throw new ConfigError(
        `${labels.ssh} cannot be combined with ${options.sandbox !== undefined ? `${labels.sandbox} (the sandbox runs on this machine only)` : "--port (the local end of the forward is a free port)"}`,
      );
    return { where: "ssh", opencode: options.opencode ?? "opencode", ssh, idleTimeoutMs };
  }
  const dir = resolve(options.dir ?? ".");
  const dirProblem = notADirectory(dir);
  if (dirProblem) throw new ConfigError(`${labels.dir} ${dir} ${dirProblem}`);
  const port = options.port ?? 0;
  if (port > 65535) throw new ConfigError(`--port must be at most 65535, not ${port}`);
  const sandbox = resolveSandbox(options, env, labels);
  if (!sandbox && options.model !== undefined)
    throw new ConfigError(
      `server start ${labels.model} needs ${labels.sandbox}: it names the provider the sandbox lets through`,
    );
  return {
    where: "local",
    opencode: options.opencode ?? null,
    dir,
    port,
    idleTimeoutMs,
    sandbox,
    models: [options.model ?? null],
  };
}
