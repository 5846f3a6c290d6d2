// Everything before a turn on a running server (--attach): reach the server and learn its version,
// write run.started, refuse what cannot apply to a shared server, check the paths, read the
// prompt, and find or create the session with the turn's permission rules. Returns the turn to
// run, or the problem that stops it before it starts (class config_error, exit 5).
import { extname } from "node:path";
import { pathToFileURL } from "node:url";
import { readEnvironment } from "../environment.js";
import { titleFor } from "../opencode/invocation.js";
import { type PermissionRule, rulesetOf } from "../opencode/permissions.js";
import { ConfigError } from "../outcome/errors.js";
import { type LaunchProblem, notADirectory, readTurnInput, turnPathProblem } from "../turn/prepare.js";
import type { ResolvedTurn } from "../turn/resolve-options.js";
import type { TurnCore } from "../turn/turn-core.js";
import {
  displayUrl,
  type PromptBody,
  SERVER_ERROR_NAMES,
  type ServerAuth,
  ServerClient,
  ServerError,
} from "./client.js";
import { findServer } from "./registry.js";
import type { ServerTurn } from "./server-source.js";

/** The server API oc-exec was tested against: the releases whose event stream it was recorded from. */
const SERVER_TESTED_VERSIONS = ["1.18.33"] as const;

export type PreparedServer = { turn: ServerTurn; problem: null } | { turn: null; problem: LaunchProblem };

/** The URL as given, checked; credentials in it are taken out and used for basic auth. */
function parseServerUrl(text: string, label: string): { url: URL; auth: ServerAuth } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${label} ${JSON.stringify(text)} is not a URL (e.g. http://127.0.0.1:4096)`, "UsageError");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError(`${label} ${JSON.stringify(text)} must be an http:// or https:// URL`, "UsageError");
  const auth = url.password
    ? { username: decodeURIComponent(url.username) || "opencode", password: decodeURIComponent(url.password) }
    : null;
  return { url, auth };
}

/**
 * Credentials, first found wins: in the URL; OPENCODE_SERVER_PASSWORD (with OPENCODE_SERVER_USERNAME,
 * default "opencode"), opencode's own convention; the password of a server `oc-exec server start` started.
 */
function serverAuth(url: URL, inUrl: ServerAuth, env: NodeJS.ProcessEnv): ServerAuth {
  if (inUrl) return inUrl;
  if (env.OPENCODE_SERVER_PASSWORD)
    return { username: env.OPENCODE_SERVER_USERNAME || "opencode", password: env.OPENCODE_SERVER_PASSWORD };
  const managed = findServer(env, displayUrl(url));
  return managed ? { username: managed.username, password: managed.password } : null;
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
function runOnlyFlags(options: ResolvedTurn): string[] {
  const refused: string[] = [];
  if (options.config.length > 0) refused.push(options.labels.config);
  if (options.pure) refused.push(options.labels.pure);
  return refused;
}

export async function prepareServerTurn(
  options: ResolvedTurn,
  core: TurnCore,
  attach: string,
): Promise<PreparedServer> {
  const { labels } = options;
  const fail = (name: string, message: string): PreparedServer => ({ turn: null, problem: { name, message } });
  let parsed: { url: URL; auth: ServerAuth } | null = null;
  let client: ServerClient | null = null;
  let version: string | null = null;
  let reachProblem: LaunchProblem | null = null;
  try {
    parsed = parseServerUrl(attach, labels.attach);
    client = new ServerClient(parsed.url, serverAuth(parsed.url, parsed.auth, options.env));
    version = (await client.health()).version;
  } catch (error) {
    if (error instanceof ConfigError) reachProblem = { name: error.name, message: error.message };
    else if (error instanceof ServerError)
      reachProblem = { name: SERVER_ERROR_NAMES[error.kind], message: error.message };
    else throw error;
  }
  core.started({
    opencode: { path: null, version, url: parsed ? displayUrl(parsed.url) : attach },
    cwd: options.dir,
    model: options.model,
    agent: options.agent,
    resume: options.session,
  });
  const dirProblem = notADirectory(options.dir);
  if (dirProblem) return fail("WorkspaceError", `${labels.dir} ${options.dir} ${dirProblem}`);
  if (reachProblem || !client) return fail(reachProblem?.name ?? "ServerUnreachable", reachProblem?.message ?? "");
  const refused = runOnlyFlags(options);
  if (refused.length > 0) {
    return fail(
      "UnsupportedFlag",
      `${refused.join(" and ")} cannot apply to a running server: its configuration and plugins are the ones it started with (restart it with them, or run without ${labels.attach})`,
    );
  }
  if (!(SERVER_TESTED_VERSIONS as readonly string[]).includes(version ?? "")) {
    core.normalizer.warning(
      "untested_opencode",
      `the opencode server at ${client.shown} runs ${version ?? "an unknown release"}; oc-exec's server backend was tested with ${SERVER_TESTED_VERSIONS.join(", ")}, and its event stream may differ`,
    );
  }
  const pathsProblem = turnPathProblem(options);
  if (pathsProblem) return { turn: null, problem: pathsProblem };
  let input: Awaited<ReturnType<typeof readTurnInput>>;
  try {
    input = await readTurnInput(options, core);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return fail(error.name, error.message);
  }
  // The policy reaches the server as the session's rules; OPENCODE_PERMISSION does too, since the
  // server cannot see this process's environment.
  const inherited = options.env.OPENCODE_PERMISSION ? safeJson(options.env.OPENCODE_PERMISSION) : null;
  // Nobody can answer the question tool in a headless turn, so it is not offered; a rule of the
  // caller's that allows it comes later and wins (opencode applies the last matching rule).
  const rules: PermissionRule[] = [
    NO_QUESTIONS,
    ...(input.policy ? rulesetOf(input.policy) : inherited ? rulesetOf(inherited) : []),
  ];
  const slash = options.model?.indexOf("/") ?? -1;
  if (options.model && slash <= 0)
    return fail("UsageError", `the model must be provider/model, not ${JSON.stringify(options.model)}`);
  const model = options.model
    ? { providerID: options.model.slice(0, slash), modelID: options.model.slice(slash + 1) }
    : null;
  let sessionId: string | null = null;
  try {
    sessionId = await resolveSession(client, options, rules, input.title ?? titleFor(input.prompt));
  } catch (error) {
    if (!(error instanceof ServerError)) throw error;
    if (error.kind === "http" && error.status === 404 && options.session)
      return fail("SessionNotFound", `Session not found: ${options.session} (on ${client.shown})`);
    return fail(SERVER_ERROR_NAMES[error.kind], error.message);
  }
  if (sessionId === null)
    return fail("SessionNotFound", `there is no session to continue in ${options.dir} on ${client.shown}`);
  const body: PromptBody = {
    parts: [
      { type: "text", text: input.prompt },
      ...options.files.map((file) => ({
        type: "file" as const,
        mime: MIME[extname(file).toLowerCase()] ?? "text/plain",
        url: pathToFileURL(file).href,
        filename: file.split("/").at(-1) ?? file,
      })),
    ],
  };
  if (model) body.model = model;
  if (options.agent) body.agent = options.agent;
  if (options.variant) body.variant = options.variant;
  return {
    turn: {
      client,
      directory: options.dir,
      sessionId,
      body,
      auto: options.auto,
      deltas: options.textDeltas,
      killAfterMs: options.killAfterMs,
      recordTo: readEnvironment(options.env).recordEvents,
    },
    problem: null,
  };
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
  options: ResolvedTurn,
  rules: PermissionRule[],
  title: string,
): Promise<string | null> {
  let resumed: string | null = null;
  if (options.session) resumed = (await client.getSession(options.dir, options.session)).id;
  else if (options.continue) resumed = (await client.listSessions(options.dir))[0]?.id ?? null;
  if (resumed === null) {
    if (options.session || options.continue) return null;
    return (await client.createSession(options.dir, { title, permission: rules })).id;
  }
  const id = options.fork ? (await client.forkSession(options.dir, resumed)).id : resumed;
  await client.updateSession(options.dir, id, { permission: rules });
  return id;
}
