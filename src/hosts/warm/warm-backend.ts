// --warm (OC_EXEC_WARM=1): a plain turn runs on a warm server instead of starting opencode. The
// first turn that fits no running server starts one (`server start`'s supervisor, with the turn's
// configuration and environment: warm-key.ts) and every later turn that fits attaches to it. Two
// processes that start at the same moment share one server: a lock file per key lets one start it
// while the others wait for its record. The server stops itself after OC_EXEC_WARM_IDLE without a
// turn. A turn that cannot run on a server runs cold, and says so in a warning.
import { ensureOpencode } from "../../domain/opencode/ensure.js";
import type { Backend } from "../../engine/backend.js";
import type { Placement } from "../../plan/placement.js";
import { liveServers, startServer } from "../server/managed.js";
import { registryDir } from "../server/registry.js";
import { makeServerBackend } from "../server/server-backend.js";
import { findOrStart } from "./start-lock.js";
import { serverEnvironment, warmKey } from "./warm-key.js";

export type WarmSpec = Pick<
  Placement,
  "opencode" | "env" | "dir" | "opencodeConfig" | "pure" | "ssh" | "sandbox" | "models" | "warmIdleMs" | "names"
>;

const START_TIMEOUT_MS = 60_000;

/** Why this turn cannot run on a warm server, or null when it can. */
function coldReason(spec: WarmSpec): string | null {
  if (spec.ssh) return `${spec.names.ssh} runs the turn on another host`;
  if (spec.pure) return `${spec.names.pure} cannot apply to a server's plugins`;
  return null;
}

/** The URL of a running server for this key, started here if none runs; or why there is none. */
function findOrStartServer(
  key: string,
  start: () => ReturnType<typeof startServer>,
  env: NodeJS.ProcessEnv,
): Promise<{ url: string } | { problem: string }> {
  const fitting = () => {
    const running = liveServers(env)
      .filter((s) => s.warm_key === key)
      .at(-1);
    return running ? { url: running.url } : null;
  };
  return findOrStart(registryDir(env), key, START_TIMEOUT_MS + 10_000, fitting, async () => {
    const server = await start();
    if ("problem" in server) return { problem: server.problem.message };
    // Under GitHub Actions, the password this process made is masked in the job's log from now on.
    if (env.GITHUB_ACTIONS === "true") process.stderr.write(`::add-mask::${server.password}\n`);
    return { url: server.url };
  });
}

/** A cold backend that says, once per turn, why the turn did not run warm. */
function cold(backend: Backend, why: string): Backend {
  return {
    ...backend,
    check(plan) {
      const checked = backend.check(plan);
      return { ...checked, warnings: [{ code: "warm_cold", message: `ran cold: ${why}` }, ...checked.warnings] };
    },
  };
}

export async function makeWarmBackend(spec: WarmSpec, makeCold: () => Promise<Backend>): Promise<Backend> {
  const why = coldReason(spec);
  if (why) return cold(await makeCold(), why);
  const local = await ensureOpencode(spec.opencode, spec.env);
  // No binary, or bad inherited configuration: the cold backend reports it as a cold turn would.
  if ("problem" in local) return makeCold();
  const { binary, detected } = local;
  if ("problem" in spec.opencodeConfig) return makeCold();
  const configContent = spec.opencodeConfig.content;
  const models = [spec.models.model, ...(spec.models.fallback ? [spec.models.fallback] : [])];
  const fit = {
    dir: spec.dir,
    binary: binary.path,
    version: detected.version,
    configContent,
    sandbox: spec.sandbox,
    models,
    env: spec.env,
  };
  const key = warmKey(fit);
  const found = await findOrStartServer(
    key,
    () =>
      startServer({
        binary: fit.binary,
        version: fit.version,
        dir: fit.dir,
        idleTimeoutMs: spec.warmIdleMs,
        port: 0,
        env: serverEnvironment(spec.env, configContent),
        startTimeoutMs: START_TIMEOUT_MS,
        sandbox: spec.sandbox,
        models,
        warmKey: key,
      }),
    spec.env,
  );
  if ("problem" in found) return cold(await makeCold(), `the warm server did not start: ${found.problem}`);
  const server = await makeServerBackend({ attach: found.url, label: spec.names.attach, env: spec.env });
  // The server was started with this turn's configuration: --config and --mcp are already in it.
  return { ...server, check: (plan) => server.check({ ...plan, placement: { ...plan.placement, config: [] } }) };
}
