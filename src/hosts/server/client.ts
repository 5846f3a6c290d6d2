// A small typed client for the parts of opencode's server API a turn needs, on node:http.
// Chosen over @opencode-ai/sdk because a turn uses a dozen routes and one event stream, because the
// generated SDK (and its version pinning) would weigh on every cold start, and because errors here
// must become oc-exec's classes with the URL in the message: each failure is a ServerError whose
// kind says what went wrong. node:http rather than fetch: undici's fetch took a warm turn's peak
// RSS from ~45 MB to ~85 MB (measured here with the same requests). The server's version comes
// from GET /global/health; the caller compares it with the tested releases (server-backend.ts).
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { PermissionRule } from "../../domain/opencode/permissions.js";
import { SseParser } from "./sse.js";

export type ServerAuth = { username: string; password: string } | null;

export type ServerErrorKind =
  /** Nothing listens there, the name does not resolve, or the connection timed out. */
  | "unreachable"
  /** The server asked for credentials, or refused the ones given. */
  | "unauthorized"
  /** Something answered, but not opencode's API. */
  | "not_opencode"
  /** An opencode server from before the routes oc-exec needs (it has no /global/health). */
  | "too_old"
  /** An opencode 2.x server: its API moved under /api/ and runs turns its own way. */
  | "v2"
  /** opencode answered with an error status. */
  | "http";

/** The error name each kind becomes in events and results: one table for every stage that reaches a server. */
export const SERVER_ERROR_NAMES: Record<ServerErrorKind, string> = {
  unreachable: "ServerUnreachable",
  unauthorized: "ServerUnauthorized",
  not_opencode: "NotAnOpencodeServer",
  too_old: "OpencodeServerTooOld",
  v2: "OpencodeServer2x",
  http: "ServerRequestFailed",
};

export class ServerError extends Error {
  constructor(
    readonly kind: ServerErrorKind,
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = "ServerError";
  }
}

export type Health = { version: string | null };
export type SessionInfo = { id: string; directory: string | null; parentID: string | null; updated: number };

export type PromptBody = {
  parts: ({ type: "text"; text: string } | { type: "file"; mime: string; url: string; filename: string })[];
  model?: { providerID: string; modelID: string };
  agent?: string;
  variant?: string;
};

/** A live subscription to the server's event stream. */
export type EventStream = {
  /** Pulls the next chunk and passes its events to onEvent; false once the stream ended. */
  pump(): Promise<boolean>;
  close(): void;
};

const HEALTH_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 30_000;

/** The URL as shown to people: no credentials, no trailing slash. */
export function displayUrl(url: URL): string {
  const shown = new URL(url.href);
  shown.username = "";
  shown.password = "";
  return shown.href.replace(/\/$/, "");
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code;
  return cause?.message ?? (error instanceof Error ? error.message : String(error));
}

export class ServerClient {
  readonly shown: string;
  private readonly base: string;
  private readonly headers: Record<string, string>;

  constructor(
    url: URL,
    readonly auth: ServerAuth,
  ) {
    this.shown = displayUrl(url);
    this.base = this.shown;
    this.headers = auth
      ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}` }
      : {};
  }

  private url(path: string, directory?: string): string {
    return directory === undefined
      ? `${this.base}${path}`
      : `${this.base}${path}?directory=${encodeURIComponent(directory)}`;
  }

  /** One request; resolves with the response once its headers are in (the body still streams). */
  private send(
    method: string,
    url: string,
    options: { body?: string; timeoutMs: number; headers?: Record<string, string> },
  ): Promise<{ response: IncomingMessage; cancel: () => void }> {
    return new Promise((resolve, reject) => {
      const target = new URL(url);
      const request = (target.protocol === "https:" ? httpsRequest : httpRequest)(target, {
        method,
        headers: {
          ...this.headers,
          ...options.headers,
          ...(options.body === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(options.body) }),
        },
      });
      const timer = setTimeout(() => request.destroy(new Error("no answer in time")), options.timeoutMs);
      request.once("response", (response) => {
        clearTimeout(timer);
        resolve({ response, cancel: () => request.destroy() });
      });
      request.once("error", (error) => {
        clearTimeout(timer);
        reject(new ServerError("unreachable", `cannot reach the opencode server at ${this.shown} (${causeOf(error)})`));
      });
      request.end(options.body);
    });
  }

  private async request(
    method: string,
    path: string,
    options: { directory?: string; body?: unknown; timeoutMs?: number } = {},
  ): Promise<unknown> {
    const { response } = await this.send(method, this.url(path, options.directory), {
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      timeoutMs: options.timeoutMs ?? REQUEST_TIMEOUT_MS,
    });
    const chunks: Buffer[] = [];
    const text = await new Promise<string>((resolve) => {
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
      response.once("error", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
    const status = response.statusCode ?? 0;
    if (status === 401 || status === 403) {
      throw new ServerError(
        "unauthorized",
        `the opencode server at ${this.shown} refused the credentials (HTTP ${status}); set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME if not "opencode")`,
        status,
      );
    }
    let value: unknown = null;
    try {
      value = text === "" ? null : JSON.parse(text);
    } catch {
      throw new ServerError(
        "not_opencode",
        `${this.shown} answered ${method} ${path} with HTTP ${status} and no JSON: it does not look like an opencode server`,
        status,
      );
    }
    if (status < 200 || status >= 300) {
      const data = (value as { data?: { message?: unknown }; message?: unknown } | null) ?? {};
      const said =
        typeof data.data?.message === "string"
          ? data.data.message
          : typeof data.message === "string"
            ? data.message
            : text.slice(0, 300);
      throw new ServerError("http", `opencode server ${method} ${path}: HTTP ${status}: ${said}`, status);
    }
    return value;
  }

  /** GET /global/health: proves an opencode server answers, with these credentials, and names its version. */
  async health(): Promise<Health> {
    const value = await this.request("GET", "/global/health", { timeoutMs: HEALTH_TIMEOUT_MS }).catch(async (error) => {
      if (!(error instanceof ServerError) || (error.kind !== "http" && error.kind !== "not_opencode")) throw error;
      // An older opencode (1.0.185 here) has no /global/health: it hands unknown routes to its web
      // app and answers 500. It still describes itself at /doc, so the user hears "too old", not
      // "not opencode" or an HTTP 500 from a route they never asked for.
      const v2 = await this.v2Version();
      if (v2) throw this.v2Error(v2);
      if (await this.describesOpencode())
        throw new ServerError(
          "too_old",
          `the opencode server at ${this.shown} is too old for oc-exec's server backend: it has no GET /global/health (opencode 1.14.41 and 1.18.33 have it; 1.18.33 is the release oc-exec is tested with). Upgrade opencode there`,
          error.status,
        );
      if (error.kind === "http" && error.status === 404)
        throw new ServerError("not_opencode", `${this.shown} has no /global/health: it is not an opencode server`, 404);
      throw error;
    });
    const health = value as { healthy?: unknown; version?: unknown } | null;
    if (health?.healthy !== true || !health)
      throw new ServerError("not_opencode", `${this.shown} did not answer /global/health as an opencode server does`);
    const version = typeof health.version === "string" ? health.version : null;
    if (/^([2-9]|\d{2,})\./.test(version ?? "")) throw this.v2Error(version!);
    return { version };
  }

  /** 2.x's health, under /api/ like the rest of its API: its version when it answers as one. */
  private async v2Version(): Promise<string | null> {
    for (const path of ["/api/health", "/api/global/health"]) {
      try {
        const value = (await this.request("GET", path, { timeoutMs: HEALTH_TIMEOUT_MS })) as {
          version?: unknown;
        } | null;
        if (typeof value?.version === "string" && /^([2-9]|\d{2,})\./.test(value.version)) return value.version;
      } catch {
        // Not there: try the next, then it is not 2.x.
      }
    }
    return null;
  }

  private v2Error(version: string): ServerError {
    return new ServerError(
      "v2",
      `the opencode server at ${this.shown} is opencode ${version}: 2.x moved its API under /api/ and runs a turn its own way, which oc-exec's server backend does not speak (it speaks 1.x's, tested with 1.18.33); run the turn without a server (oc-exec runs \`opencode run --standalone\` with a 2.x binary), or through ACP (--acp opencode)`,
    );
  }

  /** Whether GET /doc is opencode's OpenAPI document: how an opencode server of any release names itself. */
  private async describesOpencode(): Promise<boolean> {
    try {
      const doc = (await this.request("GET", "/doc", { timeoutMs: HEALTH_TIMEOUT_MS })) as {
        info?: { title?: unknown };
      } | null;
      return doc?.info?.title === "opencode";
    } catch {
      return false;
    }
  }

  async createSession(
    directory: string,
    body: { title?: string; permission?: PermissionRule[] },
  ): Promise<SessionInfo> {
    return sessionInfo(await this.request("POST", "/session", { directory, body }));
  }

  async getSession(directory: string, id: string): Promise<SessionInfo> {
    return sessionInfo(await this.request("GET", `/session/${encodeURIComponent(id)}`, { directory }));
  }

  async updateSession(directory: string, id: string, body: { permission: PermissionRule[] }): Promise<void> {
    await this.request("PATCH", `/session/${encodeURIComponent(id)}`, { directory, body });
  }

  async forkSession(directory: string, id: string): Promise<SessionInfo> {
    return sessionInfo(await this.request("POST", `/session/${encodeURIComponent(id)}/fork`, { directory, body: {} }));
  }

  /** The workspace's sessions (top-level ones), most recently updated first. */
  async listSessions(directory: string): Promise<SessionInfo[]> {
    const value = await this.request("GET", "/session", { directory });
    const list = Array.isArray(value) ? value.map(sessionInfo) : [];
    return list.filter((s) => s.parentID === null).sort((a, b) => b.updated - a.updated);
  }

  async deleteSession(directory: string, id: string): Promise<void> {
    await this.request("DELETE", `/session/${encodeURIComponent(id)}`, { directory });
  }

  async prompt(directory: string, id: string, body: PromptBody): Promise<void> {
    await this.request("POST", `/session/${encodeURIComponent(id)}/prompt_async`, { directory, body });
  }

  async abort(directory: string, id: string): Promise<void> {
    await this.request("POST", `/session/${encodeURIComponent(id)}/abort`, { directory, timeoutMs: 5_000 });
  }

  async replyPermission(directory: string, requestId: string, reply: "once" | "reject", message?: string) {
    await this.request("POST", `/permission/${encodeURIComponent(requestId)}/reply`, {
      directory,
      body: message === undefined ? { reply } : { reply, message },
    });
  }

  async rejectQuestion(directory: string, requestId: string): Promise<void> {
    await this.request("POST", `/question/${encodeURIComponent(requestId)}/reject`, { directory });
  }

  /**
   * Subscribes to the workspace's event stream (GET /event). Resolves once the server accepted the
   * subscription, so that a prompt sent afterwards cannot outrun it.
   */
  events(directory: string, onEvent: (data: string) => void): Promise<EventStream> {
    return this.subscribe(this.url("/event", directory), onEvent);
  }

  /** Every workspace's events, each as {directory, payload}: what a supervisor watches for activity. */
  globalEvents(onEvent: (data: string) => void): Promise<EventStream> {
    return this.subscribe(this.url("/global/event"), onEvent);
  }

  private async subscribe(url: string, onEvent: (data: string) => void): Promise<EventStream> {
    // The time limit is for the answer's headers only: the stream itself lives as long as the turn.
    const { response, cancel } = await this.send("GET", url, {
      timeoutMs: HEALTH_TIMEOUT_MS,
      headers: { accept: "text/event-stream" },
    });
    const status = response.statusCode ?? 0;
    if (status === 401 || status === 403) {
      cancel();
      throw new ServerError("unauthorized", `the opencode server at ${this.shown} refused the credentials`, status);
    }
    if (status !== 200) {
      cancel();
      throw new ServerError(
        "not_opencode",
        `${this.shown} answered ${url.slice(this.base.length)} with HTTP ${status}`,
        status,
      );
    }
    const parser = new SseParser(onEvent);
    // Pulled, not pushed: the caller reads a chunk when it is ready for one (flow control).
    const chunks = response[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    let closed = false;
    return {
      async pump() {
        if (closed) return false;
        const { value, done } = await chunks.next();
        if (done) {
          parser.end();
          return false;
        }
        parser.push(value);
        return true;
      },
      close() {
        closed = true;
        cancel();
      },
    };
  }
}

function sessionInfo(value: unknown): SessionInfo {
  const v = (value ?? {}) as { id?: unknown; directory?: unknown; parentID?: unknown; time?: { updated?: unknown } };
  if (typeof v.id !== "string") throw new ServerError("not_opencode", "the server answered without a session id");
  return {
    id: v.id,
    directory: typeof v.directory === "string" ? v.directory : null,
    parentID: typeof v.parentID === "string" ? v.parentID : null,
    updated: typeof v.time?.updated === "number" ? v.time.updated : 0,
  };
}
