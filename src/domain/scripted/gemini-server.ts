import { createServer } from "node:http";
import { errorMessage, heldAnswers, listenLoopback } from "./loopback.js";
import {
  type ChatMessage,
  type ChatRequest,
  type ModelServer,
  type RecordedRequest,
  type Reply,
  readJson,
  recordedOf,
  scriptedReply,
} from "./model-server.js";

type Part = {
  text?: string;
  thought?: boolean;
  functionCall?: { name: string; args?: Record<string, unknown> };
  functionResponse?: { name: string; response?: unknown };
};
type GeminiRequest = {
  contents?: { role?: string; parts?: Part[] }[];
  generationConfig?: { responseMimeType?: string; responseJsonSchema?: unknown; responseSchema?: unknown };
};

/** The scripts' tool names (opencode's) as gemini-cli calls its tools, with their arguments. */
const TOOLS: Record<string, (args: Record<string, unknown>) => { name: string; args: Record<string, unknown> }> = {
  bash: (a) => ({ name: "run_shell_command", args: { command: a.command, description: a.description } }),
  write: (a) => ({ name: "write_file", args: { file_path: a.filePath, content: a.content } }),
  read: (a) => ({ name: "read_file", args: { absolute_path: a.filePath } }),
};

/** Gemini's contents as the chat the scripts read: the caller's texts, the calls, their results. */
function chatOf(body: GeminiRequest, model: string): ChatRequest {
  const messages: ChatMessage[] = [];
  for (const content of body.contents ?? []) {
    for (const part of content.parts ?? []) {
      if (part.thought) continue;
      if (typeof part.text === "string" && content.role !== "model") {
        // gemini-cli's own context, not the caller's prompt.
        if (part.text.startsWith("<session_context>")) continue;
        messages.push({ role: "user", content: part.text });
      } else if (typeof part.text === "string") messages.push({ role: "assistant", content: part.text });
      else if (part.functionCall) messages.push({ role: "assistant", tool_calls: [part.functionCall] });
      else if (part.functionResponse)
        messages.push({ role: "tool", content: JSON.stringify(part.functionResponse.response ?? null) });
    }
  }
  return { model, messages };
}

const ERRORS: Record<number, { status: string }> = {
  400: { status: "INVALID_ARGUMENT" },
  401: { status: "UNAUTHENTICATED" },
  404: { status: "NOT_FOUND" },
  429: { status: "RESOURCE_EXHAUSTED" },
  500: { status: "INTERNAL" },
  529: { status: "UNAVAILABLE" },
};

/** An OpenAI-shaped error reply as Gemini words it: {error: {code, message, status}}. */
function geminiError(reply: Extract<Reply, { kind: "http" }>): unknown {
  const message = errorMessage(
    reply,
    "The input token count (200000) exceeds the maximum number of tokens allowed (128000).",
  );
  return { error: { code: reply.status, message, status: ERRORS[reply.status]?.status ?? "UNKNOWN" } };
}

export async function startGeminiServer(
  script: (body: ChatRequest, seen: readonly RecordedRequest[]) => Reply = scriptedReply,
): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const held = heldAnswers();
  const server = createServer(async (req, res) => {
    const route = /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent)/.exec(req.url ?? "");
    if (req.method !== "POST" || !route) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify(geminiError({ kind: "http", status: 404, body: null })));
      return;
    }
    const body = (await readJson(req, res)) as GeminiRequest | null;
    if (body === null) return;
    const stream = route[2] === "streamGenerateContent";
    const send = (object: unknown, finish: boolean) => {
      if (stream) res.write(`data: ${JSON.stringify(object)}\r\n\r\n`);
      else res.write(JSON.stringify(object));
      if (finish) res.end();
    };
    // gemini-cli's own side requests (a JSON answer to a schema: routing, the next speaker): one
    // answer that fits each of them.
    if (body.generationConfig?.responseMimeType === "application/json") {
      res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
      const json = {
        next_speaker: "user",
        reasoning: "scripted",
        complexity_score: 1,
        complexity_reasoning: "scripted",
      };
      send(
        {
          candidates: [
            { content: { role: "model", parts: [{ text: JSON.stringify(json) }] }, finishReason: "STOP", index: 0 },
          ],
        },
        true,
      );
      return;
    }
    const chat = chatOf(body, route[1]!);
    requests.push(recordedOf(chat, (req.headers["x-goog-api-key"] as string | undefined) ?? null));
    const reply = script(chat, requests);
    if (reply.kind === "http") {
      res.writeHead(reply.status === 529 ? 503 : reply.status, {
        "content-type": "application/json",
        ...reply.headers,
      });
      res.end(JSON.stringify(geminiError(reply)));
      return;
    }
    res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
    if (reply.kind === "hang") return held.hang(res);
    const usage = reply.usage ?? { prompt_tokens: 100, completion_tokens: 10 };
    const usageMetadata = {
      promptTokenCount: usage.prompt_tokens,
      candidatesTokenCount: usage.completion_tokens,
      totalTokenCount: usage.prompt_tokens + usage.completion_tokens,
    };
    const candidate = (parts: Part[], finishReason?: string) => ({
      candidates: [{ content: { role: "model", parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
      ...(finishReason ? { usageMetadata } : {}),
      modelVersion: route[1],
    });
    if (reply.kind === "text") {
      if (!(await held.waitFor(reply, res))) return;
      const mid = Math.floor(reply.text.length / 2);
      if (!stream)
        return send(candidate([{ text: reply.text }], reply.finish === "length" ? "MAX_TOKENS" : "STOP"), true);
      send(candidate([{ text: reply.text.slice(0, mid) }]), false);
      send(candidate([{ text: reply.text.slice(mid) }], reply.finish === "length" ? "MAX_TOKENS" : "STOP"), true);
      return;
    }
    const calls = reply.calls.map((call) => ({
      functionCall: (TOOLS[call.name] ?? ((args) => ({ name: call.name, args })))(call.args),
    }));
    send(candidate([...(reply.text ? [{ text: reply.text }] : []), ...calls], "STOP"), true);
  });
  return listenLoopback(server, held, requests);
}
