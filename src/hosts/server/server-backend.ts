// The server backend (--attach): turns run as sessions on a running opencode server. Made once per
// run: the URL is parsed, the credentials found (URL, OPENCODE_SERVER_PASSWORD, or oc-exec's record
// of a server it started) and the server's health checked once, however many turns follow. Each
// turn finds or creates its session with the turn's permission rules and sends its prompt.
import { readFileSync } from "node:fs";
import { extname } from "node:path";
import { pathToFileURL } from "node:url";
import type { UpstreamSource } from "../../domain/events/upstream-source.js";
import { titleFor } from "../../domain/opencode/invocation.js";
import { type PermissionRule, rulesetOf } from "../../domain/opencode/permissions.js";
import type { Backend, CommandLaunch } from "../../engine/backend.js";
import { readEnvironment } from "../../kernel/environment.js";
import type { LaunchProblem, Warning } from "../../kernel/problem.js";
import { DEFAULTS } from "../../plan/options.js";
import type { ResolvedTurn, TurnSettings } from "../../plan/resolve-options.js";
import { sandboxedCheck, serverSandboxProblem } from "../sandbox/policy.js";
import { workspaceCodeProblem } from "../sandbox/workspace-code.js";
import { type RemoteLaunchSpec, remoteCheck } from "../ssh/remote-launch.js";
import {
  displayUrl,
  type PromptBody,
  SERVER_ERROR_NAMES,
  type ServerAuth,
  ServerClient,
  ServerError,
} from "./client.js";
import { findServer, type ManagedServer, refusedFile, takeLease } from "./registry.js";
import { serverSource } from "./server-source.js";

/** The server API oc-exec was tested against: the releases whose event stream it was recorded from. */
const SERVER_TESTED_VERSIONS = ["1.18.33"] as const;

export type ServerBackendSpec = {
  /** The URL as the caller gave it, and what the caller calls the option (--attach, attach). */
  attach: string;
  label: string;
  env: NodeJS.ProcessEnv;
};

/** The URL as given, checked; credentials in it are taken out and used for basic auth. */
function parseServerUrl(text: string, label: string): { url: URL; auth: ServerAuth } | LaunchProblem {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return {
      name: "UsageError",
      message: `${label} ${JSON.stringify(text)} is not a URL (e.g. http://127.0.0.1:4096)`,
    };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return { name: "UsageError", message: `${label} ${JSON.stringify(text)} must be an http:// or https:// URL` };
  const auth = url.password
    ? { username: decodeURIComponent(url.username) || "opencode", password: decodeURIComponent(url.password) }
    : null;
  return { url, auth };
}

/**
 * Credentials, first found wins: in the URL; OPENCODE_SERVER_PASSWORD (with OPENCODE_SERVER_USERNAME,
 * default "opencode"), opencode's own convention; the password of a server `oc-exec server start` started.
 */
function serverAuth(inUrl: ServerAuth, env: NodeJS.ProcessEnv, managed: ManagedServer | null): ServerAuth {
  if (inUrl) return inUrl;
  if (env.OPENCODE_SERVER_PASSWORD)
    return { username: env.OPENCODE_SERVER_USERNAME || "opencode", password: env.OPENCODE_SERVER_PASSWORD };
  return managed ? { username: managed.username, password: managed.password } : null;
}

/** The proxy's refusals since the turn opened: its server's supervisor writes them (managed.ts). */
function refusalsSince(file: string): () => string[] {
  const read = () => {
    try {
      return readFileSync(file, "utf8").split("\n").filter(Boolean);
    } catch {
      return [];
    }
  };
  const before = read().length;
  return () => read().slice(before);
}

const NO_QUESTIONS: PermissionRule = { permission: "question", pattern: "*", action: "deny" };

const MIME: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".pdf": "application/pdf",
};

/** What cannot reach a server another process started: per-turn opencode config and plugins. */
function runOnlyFlags(plan: ResolvedTurn): string[] {
  const refused: string[] = [];
  if (plan.placement.config.length > 0) refused.push(plan.placement.names.config);
  if (plan.placement.pure) refused.push(plan.placement.names.pure);
  return refused;
}

export async function makeServerBackend(spec: ServerBackendSpec): Promise<Backend> {
  const parsed = parseServerUrl(spec.attach, spec.label);
  if ("name" in parsed) return { opencode: { path: null, version: null, url: spec.attach }, ...unusable(parsed) };
  // A server oc-exec started: its password and its sandbox, from its record.
  const managed = findServer(spec.env, displayUrl(parsed.url));
  const auth = serverAuth(parsed.auth, spec.env, managed);
  let client = new ServerClient(parsed.url, auth);
  // A server oc-exec restarted at the same URL (between the attempts of a --retry) has a new password:
  // its record says which; each turn opened after that uses it.
  const fromRecord = managed !== null && auth?.password === managed.password;
  const currentClient = (redactor: TurnSettings["redactor"]): ServerClient => {
    if (!fromRecord) return client;
    const now = findServer(spec.env, displayUrl(parsed.url));
    if (now && now.password !== client.auth?.password) {
      redactor.add(now.password);
      client = new ServerClient(parsed.url, { username: now.username, password: now.password });
    }
    return client;
  };
  const opencode = { path: null, version: null as string | null, url: displayUrl(parsed.url) };
  try {
    opencode.version = (await client.health()).version;
  } catch (error) {
    if (!(error instanceof ServerError)) throw error;
    // Too old: the way out is named as the caller knows it (--attach, attach).
    const message = error.kind === "too_old" ? `${error.message}, or run without ${spec.label}` : error.message;
    return { opencode, ...unusable({ name: SERVER_ERROR_NAMES[error.kind], message }) };
  }
  const warnings: Warning[] = (SERVER_TESTED_VERSIONS as readonly string[]).includes(opencode.version ?? "")
    ? []
    : [
        {
          code: "untested_opencode",
          message: `the opencode server at ${client.shown} runs ${opencode.version ?? "an unknown release"}; oc-exec's server backend was tested with ${SERVER_TESTED_VERSIONS.join(", ")}, and its event stream may differ`,
        },
      ];
  const recordTo = readEnvironment(spec.env).recordEvents;
  // How a --verify check runs in the server's sandbox, when its supervisor prepared the way.
  const sandboxCheck = managed?.sandbox?.check ?? null;
  const sandboxSpec = managed?.sandbox?.spec;
  // On a server on another host, a check runs there, over its supervisor's master connection.
  const remote = managed?.ssh;
  const remoteCheckSpec: RemoteLaunchSpec | null =
    remote?.control_path !== undefined
      ? {
          args: {
            spec: {
              destination: remote.destination,
              options: remote.options ?? [],
              configFile: remote.config_file ?? null,
            },
            controlPath: remote.control_path,
            connectTimeoutMs: null,
          },
          dir: managed!.dir,
          passEnv: remote.pass_env ?? [],
          env: spec.env,
          killAfterMs: DEFAULTS.killAfterMs,
        }
      : null;
  return {
    // A server oc-exec started on another host says which, as a turn over --ssh does.
    opencode: managed?.ssh ? { ...opencode, host: managed.ssh.destination } : opencode,
    removes: [NO_QUESTIONS.permission],
    secrets: auth ? [auth.password] : [],
    ...(managed?.sandbox ? { sandbox: managed.sandbox.info } : {}),
    ...(sandboxCheck
      ? { wrapCommand: async (command: CommandLaunch) => sandboxedCheck(sandboxCheck, sandboxSpec!, command) }
      : remoteCheckSpec
        ? { wrapCommand: async (command: CommandLaunch) => remoteCheck(remoteCheckSpec, command) }
        : {}),
    // A server on another host: its directory there is every turn's workspace.
    ...(managed?.ssh ? { remote: { host: managed.ssh.destination, dir: managed.dir } } : {}),
    problem: null,
    check(plan) {
      const refused = runOnlyFlags(plan);
      const sandbox = plan.placement.sandbox
        ? serverSandboxProblem(plan.placement.sandbox, managed?.sandbox ?? null, client.shown)
        : null;
      if (sandbox) return { warnings, problem: { name: "SandboxMismatch", message: sandbox } };
      // Every turn: opencode loads a directory's plugins and tools when it first serves it, and an
      // earlier turn's agent may have written some into a subdirectory (hosts/sandbox/workspace-code.ts).
      if (managed?.sandbox && managed.sandbox.project_config !== false) {
        const what = `the sandboxed server at ${client.shown} cannot serve ${plan.placement.dir}`;
        const shipped = workspaceCodeProblem(plan.placement.dir, plan.placement.env, what);
        if (shipped) return { warnings, problem: { name: "SandboxWorkspaceCode", message: shipped } };
      }
      // A server an older release started on another host: its record does not say how to get there.
      if (managed?.ssh && !remoteCheckSpec && plan.turn.verify)
        return {
          warnings,
          problem: {
            name: "UnsupportedFlag",
            message: `${plan.turn.verify.option} cannot run on this server on another host (its record, from an older oc-exec, does not say how to reach it): restart it, or run the turn with --ssh ${managed.ssh.destination}`,
          },
        };
      // A check runs in this process: in the server's sandbox when its supervisor prepared the way
      // (sandboxedCheck), never outside it.
      if (managed?.sandbox && !sandboxCheck && plan.turn.verify)
        return {
          warnings,
          problem: {
            name: "UnsupportedFlag",
            message: `${plan.turn.verify.option} cannot run on a sandboxed server yet (the check would run outside its sandbox): run the turn without ${plan.placement.names.attach}, sandboxed`,
          },
        };
      return {
        warnings,
        problem:
          refused.length > 0
            ? {
                name: "UnsupportedFlag",
                message: `${refused.join(" and ")} cannot apply to a running server: its configuration and plugins are the ones it started with (restart it with them, or run without ${plan.placement.names.attach})`,
              }
            : null,
      };
    },
    async open(plan, input) {
      const client = currentClient(plan.turn.redactor);
      // The policy reaches the server as the session's rules; OPENCODE_PERMISSION does too, since the
      // server cannot see this process's environment.
      const inherited = plan.placement.env.OPENCODE_PERMISSION
        ? safeJson(plan.placement.env.OPENCODE_PERMISSION)
        : null;
      // Nobody can answer the question tool in a headless turn, so it is not offered; a rule of the
      // caller's that allows it comes later and wins (opencode applies the last matching rule).
      const rules: PermissionRule[] = [
        NO_QUESTIONS,
        ...(input.policy ? rulesetOf(input.policy) : inherited ? rulesetOf(inherited) : []),
      ];
      // provider/model: the resolver refused any other shape.
      const slash = plan.turn.model?.indexOf("/") ?? -1;
      // A server on another host serves its own directory there; this machine's paths mean nothing to it.
      const directory = managed?.ssh ? managed.dir : plan.placement.dir;
      let sessionId: string | null = null;
      try {
        sessionId = await resolveSession(client, plan, directory, rules, input.title ?? titleFor(input.prompt));
      } catch (error) {
        if (!(error instanceof ServerError)) throw error;
        if (error.kind === "http" && error.status === 404 && plan.session.id)
          return {
            problem: { name: "SessionNotFound", message: `Session not found: ${plan.session.id} (on ${client.shown})` },
          };
        return { problem: { name: SERVER_ERROR_NAMES[error.kind], message: error.message } };
      }
      if (sessionId === null)
        return {
          problem: {
            name: "SessionNotFound",
            message: `there is no session to continue in ${directory} on ${client.shown}`,
          },
        };
      const body: PromptBody = {
        parts: [
          { type: "text", text: input.prompt },
          ...plan.turn.files.paths.map((file) => ({
            type: "file" as const,
            mime: MIME[extname(file).toLowerCase()] ?? "text/plain",
            url: pathToFileURL(file).href,
            filename: file.split("/").at(-1) ?? file,
          })),
        ],
      };
      if (plan.turn.model)
        body.model = { providerID: plan.turn.model.slice(0, slash), modelID: plan.turn.model.slice(slash + 1) };
      if (plan.turn.agent) body.agent = plan.turn.agent.name;
      if (plan.turn.variant) body.variant = plan.turn.variant;
      const id = sessionId;
      const refusals = managed?.sandbox ? refusalsSince(refusedFile(spec.env, managed.id)) : null;
      const source = serverSource({
        client,
        directory,
        sessionId: id,
        body,
        auto: plan.turn.auto,
        deltas: plan.turn.textDeltas,
        killAfterMs: plan.turn.killAfterMs,
        recordTo,
        redact: plan.turn.redactor.text,
      });
      return {
        ...(refusals ? { refused: refusals } : {}),
        // On a server oc-exec started, its supervisor aborts this turn if this process dies.
        source: managed
          ? leased(source, () => takeLease(spec.env, managed.id, { pid: process.pid, session: id, directory }))
          : source,
        ops: {
          export: null,
          sessionId: id,
          delete: (sid) =>
            client.deleteSession(directory, sid).then(
              () => true as const,
              (error: Error) => ({ error: `deleting session ${sid} on ${client.shown} failed: ${error.message}` }),
            ),
        },
      };
    },
  };
}

/** The source, holding a lease on the server's session from its start to its end. */
function leased(source: UpstreamSource, take: () => () => void): UpstreamSource {
  return {
    start(sink) {
      const release = take();
      const running = source.start(sink);
      void running.done.finally(release);
      return running;
    },
  };
}

/** A backend every turn of which ends with the same problem: the server cannot be used. */
function unusable(problem: LaunchProblem): Pick<Backend, "problem" | "check" | "open"> {
  return { problem, check: () => ({ problem: null, warnings: [] }), open: async () => ({ problem }) };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The session the turn runs in: resumed (--session, --continue), forked from it, or new. */
async function resolveSession(
  client: ServerClient,
  plan: ResolvedTurn,
  directory: string,
  rules: PermissionRule[],
  title: string,
): Promise<string | null> {
  let resumed: string | null = null;
  if (plan.session.id) resumed = (await client.getSession(directory, plan.session.id)).id;
  else if (plan.session.continue) resumed = (await client.listSessions(directory))[0]?.id ?? null;
  if (resumed === null) {
    if (plan.session.id || plan.session.continue) return null;
    return (await client.createSession(directory, { title, permission: rules })).id;
  }
  const id = plan.session.fork ? (await client.forkSession(directory, resumed)).id : resumed;
  await client.updateSession(directory, id, { permission: rules });
  return id;
}
