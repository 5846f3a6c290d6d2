// Which warm server a plain turn may run on (--warm). Pure: tested without processes.
//
// A server's tools see the server's environment and configuration, not the turn's: a turn may only
// run on a server started for the same workspace, the same opencode binary and release, the same
// configuration content (--config and --mcp included), the same sandbox, and the same environment.
// Under GitHub Actions the environment names the run, its attempt, the job and the step, so no
// server (and none of its secrets) crosses from one step or job to another.
import { createHash } from "node:crypto";
import type { SandboxSpec } from "../../plan/sandbox-spec.js";

/** Variables a shell changes between two calls of the same script: they say nothing about what tools see. */
const VOLATILE = new Set(["_", "SHLVL", "OLDPWD", "PWD", "COLUMNS", "LINES", "OC_EXEC_GUARD"]);

export type WarmFit = {
  dir: string;
  binary: string;
  version: string | null;
  /** The configuration content the server runs with: the inherited value merged with --config/--mcp. */
  configContent: string | undefined;
  sandbox: SandboxSpec | null;
  /** With a sandbox: the models whose providers it lets through. */
  models: (string | null)[];
  env: NodeJS.ProcessEnv;
};

/** The environment a server started for this turn would get: the caller's, with the merged configuration. */
export function serverEnvironment(env: NodeJS.ProcessEnv, configContent: string | undefined): NodeJS.ProcessEnv {
  const out = { ...env };
  if (configContent === undefined) delete out.OPENCODE_CONFIG_CONTENT;
  else out.OPENCODE_CONFIG_CONTENT = configContent;
  return out;
}

/** An environment as a fit compares it: its variables but the volatile ones, sorted by name. */
export function fitEnvironment(env: NodeJS.ProcessEnv): [string, string][] {
  return Object.entries(env)
    .filter((entry): entry is [string, string] => entry[1] !== undefined && !VOLATILE.has(entry[0]))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function warmKey(fit: WarmFit): string {
  const env = fitEnvironment(serverEnvironment(fit.env, fit.configContent));
  const hash = createHash("sha256");
  hash.update(
    JSON.stringify({
      dir: fit.dir,
      binary: fit.binary,
      version: fit.version,
      sandbox: fit.sandbox,
      models: fit.sandbox ? fit.models : [],
      env,
    }),
  );
  return hash.digest("hex").slice(0, 32);
}
