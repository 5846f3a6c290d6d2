// The ACP host (--acp AGENT): made once per run, it finds the agent's command (for `opencode`, the
// binary oc-exec already uses, with `acp`), starts the agent and initializes it (acp-agent.ts), so
// run.started can say which agent runs the turn; each turn is a new session on that agent, and the
// agent ends when the run does. The engine is the one every host feeds: the agent's updates become
// the lines it reads.
import { rmSync } from "node:fs";
import { isAbsolute } from "node:path";
import { splitterOptions } from "../../domain/events/split-options.js";
import { ensureOpencode, untestedWarning } from "../../domain/opencode/ensure.js";
import { buildEnv } from "../../domain/opencode/invocation.js";
import { searchPath } from "../../domain/opencode/locate.js";
import type { Backend } from "../../engine/backend.js";
import type { LaunchProblem, Warning } from "../../kernel/problem.js";
import type { AcpSpec } from "../../plan/acp-spec.js";
import { DEFAULTS } from "../../plan/options.js";
import type { Placement } from "../../plan/placement.js";
import { hostOf } from "../../plan/ssh-spec.js";
import { ownTempDir } from "../../sys/own-temp.js";
import { type Launch, newCommandId, type Sandbox } from "../sandbox/sandbox.js";
import { openRemoteStream } from "../ssh/remote-launch.js";
import { parseMarker } from "../ssh/remote-script.js";
import { type AcpAgent, type AcpAgentSpec, startAcpAgent } from "./acp-agent.js";

/** `opencode`: with the built-in `opencode`, the binary asked for (--opencode), else the usual search. */
export type AcpBackendSpec = Pick<
  Placement,
  "opencode" | "env" | "names" | "dir" | "opencodeConfig" | "policy" | "startupTimeout" | "ssh"
> & {
  acp: AcpSpec;
  /**
   * The run's sandbox, opened (the agent and every command it runs go in it), or why it could not
   * be (no agent is started: the problem stops every turn), or null for none.
   */
  sandbox: { sandbox: Sandbox } | { problem: LaunchProblem } | null;
  signal?: AbortSignal;
  /**
   * --warm: how to reach a warm agent started with this launch (hosts/warm/warm-agent.ts), or why
   * the turn runs with an agent of its own (a `warm_cold` warning); null when --warm is not asked.
   */
  warmAgent?: { connect: WarmConnect } | { cold: string } | null;
};

/** A link to a warm agent for this launch, or why there is none (the run then starts its own). */
export type WarmConnect = (launch: {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}) => Promise<{ link: NonNullable<AcpAgentSpec["link"]> } | { problem: string }>;

/** The port `opencode acp` serves itself on in a sandbox (its default; the sandbox's relays use 3128 and 1080). */
const OPENCODE_ACP_PORT = 4096;

/** The ACP host: a backend, and whether its agent can serve another turn at once (a batch's pool). */
export type AcpBackend = Backend & { reusable(): boolean };

export async function makeAcpBackend(spec: AcpBackendSpec): Promise<AcpBackend> {
  let argv = spec.acp.argv;
  const sandbox = spec.sandbox && "sandbox" in spec.sandbox ? spec.sandbox.sandbox : null;
  // Fails closed: never an agent started outside the sandbox that was asked for.
  let problem: LaunchProblem | null = spec.sandbox && "problem" in spec.sandbox ? spec.sandbox.problem : null;
  let version: string | null = null;
  const warnings: Warning[] = [];
  // On another host (--ssh): the agent runs there, its JSON-RPC over the connection's stdio; its
  // command is found on that host's PATH (opencode: --opencode there, else `opencode`).
  const { ssh } = spec;
  const remote =
    ssh && problem === null ? await openRemoteStream(ssh, spec.env, spec.startupTimeout?.ms ?? null) : null;
  if (problem !== null) {
    // The sandbox's problem is the run's: nothing is looked for or started.
  } else if (ssh) {
    argv ??= [spec.opencode ?? "opencode", "acp"];
    if (remote && "problem" in remote) problem = remote.problem;
  } else if (argv === null) {
    const found = await ensureOpencode(spec.opencode, spec.env, spec.signal);
    if ("problem" in found) problem = found.problem;
    else {
      argv = [found.binary.path, "acp"];
      version = found.detected.version;
      const untested = untestedWarning(found.detected);
      if (untested) warnings.push(untested);
    }
  } else {
    const [command] = argv;
    const found = command!.includes("/") ? command! : searchPath(command!, spec.env.PATH);
    if (found === null)
      problem = {
        name: "AcpAgentNotFound",
        message: `${spec.names.acp} ${spec.acp.name}: ${command} is not on PATH; install the agent (its ACP command is ${argv.join(" ")}), or give its command line`,
      };
    else argv = [isAbsolute(found) ? found : command!, ...argv.slice(1)];
  }
  const shown = `${spec.names.acp} ${spec.acp.name}`;
  // The agent and its tools get a TMPDIR of the run's own, removed at close: opencode leaves a
  // 5.5 MB native library in TMPDIR at every start (as under `opencode run`, process-backend.ts).
  let tmp: string | null = null;
  const ownTmp = (env: NodeJS.ProcessEnv) => {
    tmp ??= ownTempDir("opencode", env.TMPDIR || undefined);
    return tmp;
  };
  const isOpencode = spec.acp.argv === null;
  // The agent runs for the whole run, in the workspace, with the run's environment; opencode reads
  // the policy and the extra configuration from it, as under `run`. A policy or configuration that
  // does not build starts nothing: the turn reports it.
  let agent: AcpAgent | null = null;
  const policy = "problem" in spec.policy ? null : spec.policy.value;
  const content = "content" in spec.opencodeConfig ? spec.opencodeConfig.content : undefined;
  const ready = !("problem" in spec.policy) && !(isOpencode && "problem" in spec.opencodeConfig);
  // Over ssh, where the agent runs there: the script's `started` marker says (a relative --dir, or
  // the login directory, made absolute), and whether the command was there at all.
  let cwdThere: string | null = null;
  let missingThere = false;
  const ownLine = (line: string) => {
    const marker = parseMarker(line);
    if (marker?.kind === "started") cwdThere = marker.cwd;
    if (marker?.kind === "problem" && marker.what === "not-found") missingThere = true;
    return marker !== null;
  };
  // One id for the agent's whole run in the sandbox: the proxy keeps its refusals under it.
  const id = newCommandId();
  if (problem === null && argv !== null && ready) {
    const env = isOpencode ? buildEnv(spec.env, { permission: policy, configContent: content }) : buildEnv(spec.env);
    // In a sandbox, TMPDIR is the sandbox's own (removed at its close).
    // `opencode acp` starts a server and speaks to it over HTTP on loopback: in the sandbox, on a
    // port of its own, reached directly (the sandbox's loopback is its own), not through the proxy.
    const own =
      sandbox && isOpencode ? { args: ["--port", String(OPENCODE_ACP_PORT)], ports: [OPENCODE_ACP_PORT] } : null;
    // What the table adds to another agent's command in the sandbox (plan/acp-spec.ts).
    const added = sandbox && spec.acp.sandbox ? spec.acp.sandbox.args : [];
    // --warm: an agent that outlives the run, found or started for this launch (its broker gives it a
    // TMPDIR of its own); else, or when none could be had, the run's own.
    let warmLink: AcpAgentSpec["link"];
    if (spec.warmAgent && "cold" in spec.warmAgent)
      warnings.push({ code: "warm_cold", message: `ran cold: ${spec.warmAgent.cold}` });
    else if (spec.warmAgent && !sandbox && !remote) {
      const linked = await spec.warmAgent.connect({
        file: argv[0]!,
        args: argv.slice(1),
        env: { ...env, PWD: spec.dir },
        cwd: spec.dir,
      });
      if ("problem" in linked)
        warnings.push({ code: "warm_cold", message: `ran cold: the warm agent did not start: ${linked.problem}` });
      else warmLink = linked.link;
    }
    const launch = {
      file: argv[0]!,
      args: [...argv.slice(1), ...(own?.args ?? []), ...added],
      env: { ...env, PWD: spec.dir, ...(sandbox || warmLink ? {} : { TMPDIR: ownTmp(spec.env) }) },
      ...(own ? { ownLoopback: own.ports } : {}),
      ...(sandbox && spec.acp.sandbox ? { tmpVars: spec.acp.sandbox.tmp } : {}),
    };
    // On a host, the ssh script's own TMPDIR there; no sandbox goes with --ssh (placement.ts).
    const there =
      remote && !("problem" in remote)
        ? remote.launch({ file: argv[0]!, args: argv.slice(1), env }, spec.env, DEFAULTS.killAfterMs)
        : null;
    const wrapped = sandbox ? await sandbox.wrap(launch, id) : launch;
    const started = await startAcpAgent({
      ...(there
        ? { file: there.file, args: there.args, env: there.env, cwd: process.cwd(), input: there.input, ownLine }
        : { ...wrapped, cwd: spec.dir }),
      startup: spec.startupTimeout,
      killAfterMs: DEFAULTS.killAfterMs,
      split: splitterOptions(DEFAULTS.maxLineBytes, DEFAULTS.maxOutputBytes).stderr,
      shown,
      signal: spec.signal,
      ...(warmLink ? { link: warmLink } : {}),
    });
    if ("problem" in started)
      problem =
        missingThere && ssh
          ? {
              name: "AcpAgentNotFound",
              message: `${shown}: ${argv[0]} is not on ${hostOf(ssh.destination)}'s PATH; install the agent there (its ACP command is ${argv.join(" ")}), or give its path there`,
            }
          : started.problem;
    else agent = started;
  }
  let remoteOpen = remote !== null && !("problem" in remote);
  const remoteClose = async () => {
    if (remoteOpen && remote && !("problem" in remote)) await remote.close();
    remoteOpen = false;
  };
  // A problem found before the agent started holds nothing open on the host.
  if (agent === null) await remoteClose();
  return {
    opencode: { path: (argv ?? ["opencode", "acp"]).join(" "), version, ...(ssh ? { host: ssh.destination } : {}) },
    // On a host, the workspace is there: nothing of it is checked or compared here.
    ...(ssh ? { remote: { host: ssh.destination, dir: ssh.dir } } : {}),
    ...(remote && !("problem" in remote) ? { wrapCommand: async (command) => remote.check(command) } : {}),
    ...(agent
      ? {
          acp: {
            name: spec.acp.name,
            agent_name: agent.info.name,
            version: agent.info.version,
            protocol_version: agent.info.protocolVersion,
          },
        }
      : {}),
    ...(sandbox
      ? { sandbox: sandbox.info, wrapCommand: (command: Launch) => sandbox.wrap(command, newCommandId()) }
      : {}),
    problem,
    reusable: () => problem === null && agent !== null && agent.idle(),
    async close() {
      try {
        await agent?.close();
      } finally {
        await remoteClose();
        if (tmp) rmSync(tmp, { recursive: true, force: true });
        await sandbox?.close();
      }
    },
    check(plan) {
      // A session is continued when the agent made it in this run (a conversation's next turn,
      // another attempt, a --verify repair) or can load one (ACP's loadSession); "the most recent"
      // and forks are opencode run's.
      const unsupported = [
        plan.session.continue ? plan.session.names.continue : null,
        plan.session.id !== null && agent !== null && !agent.canContinue(plan.session.id)
          ? `${plan.session.names.session} (the agent cannot load a session it did not make in this run)`
          : null,
        plan.session.fork ? plan.session.names.fork : null,
        plan.turn.variant !== null ? "--variant" : null,
        plan.turn.files.paths.length > 0 ? plan.turn.files.option : null,
        plan.session.ephemeral ? "--ephemeral" : null,
      ].filter((x): x is string => x !== null);
      return {
        warnings,
        problem:
          unsupported.length > 0
            ? {
                name: "UnsupportedFlag",
                message: `${shown} does not take ${unsupported.join(", ")} yet; nothing was run`,
              }
            : null,
      };
    },
    async open(plan, input) {
      if (isOpencode && "problem" in plan.placement.opencodeConfig)
        return { problem: plan.placement.opencodeConfig.problem };
      if (problem || agent === null) return { problem: problem! };
      // ACP's session/new takes an absolute directory: over ssh, the one the agent runs in there.
      const cwd = ssh ? (cwdThere ?? ssh.dir) : plan.placement.dir;
      if (cwd === null || !cwd.startsWith("/"))
        return {
          problem: {
            name: "AcpAgentFailed",
            message: `${shown} on ${ssh?.destination}: its directory there is not known`,
          },
        };
      // The agent's refusals since this turn began: the agent serves every turn of the run.
      const before = sandbox ? sandbox.refused(id).length : 0;
      return {
        ...(sandbox ? { refused: () => sandbox.refused(id).slice(before) } : {}),
        source: agent.turn({
          cwd,
          session: plan.session.id,
          prompt: input.prompt,
          model: plan.turn.model,
          policy: input.policy,
          auto: plan.turn.auto,
          split: splitterOptions(plan.turn.maxLineBytes, plan.turn.maxOutputBytes).stderr,
        }),
        // A session of its own per turn, in the agent's own store: nothing to export or delete here.
        ops: { export: null, delete: async () => true, sessionId: null },
      };
    },
  };
}
