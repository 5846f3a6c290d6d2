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

type Block = {
  type: string;
  text?: string;
  name?: string;
  input?: Record<string, unknown>;
  content?: unknown;
};
type MessagesRequest = {
  model?: string;
  messages?: { role: string; content: string | Block[] }[];
  tools?: { name: string }[];
  stream?: boolean;
};

/** The scripts' tool names (opencode's) as Claude Code calls its tools, with their arguments. */
const TOOLS: Record<string, (args: Record<string, unknown>) => { name: string; input: Record<string, unknown> }> = {
  bash: (a) => ({ name: "Bash", input: { command: a.command, description: a.description } }),
  write: (a) => ({ name: "Write", input: { file_path: a.filePath, content: a.content } }),
  read: (a) => ({ name: "Read", input: { file_path: a.filePath } }),
};

const blocksOf = (content: string | Block[]): Block[] =>
  typeof content === "string" ? [{ type: "text", text: content }] : content;

/** Anthropic's messages as the chat the scripts read: the caller's texts, the calls, their results. */
function chatOf(body: MessagesRequest): ChatRequest {
  const messages: ChatMessage[] = [];
  let prompt = false;
  for (const message of body.messages ?? []) {
    for (const block of blocksOf(message.content)) {
      if (block.type === "text" && typeof block.text === "string") {
        if (message.role === "assistant") messages.push({ role: "assistant", content: block.text });
        // The caller's prompt is the first text naming a scenario (or the last, when none does).
        else if (!prompt && /scenario:/.test(block.text)) {
          prompt = true;
          messages.unshift({ role: "user", content: block.text });
        } else if (prompt) messages.push({ role: "user", content: block.text });
      } else if (block.type === "tool_use") messages.push({ role: "assistant", tool_calls: [block] });
      else if (block.type === "tool_result")
        messages.push({ role: "tool", content: JSON.stringify(block.content ?? null) });
    }
  }
  return { model: body.model, messages };
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  404: "not_found_error",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

/** An OpenAI-shaped error reply as Anthropic words it: {type: "error", error: {type, message}}. */
function anthropicError(reply: Extract<Reply, { kind: "http" }>): unknown {
  const message = errorMessage(reply, "prompt is too long: 200000 tokens > 128000 maximum");
  return { type: "error", error: { type: ERROR_TYPES[reply.status] ?? "api_error", message } };
}

export async function startAnthropicServer(
  script: (body: ChatRequest, seen: readonly RecordedRequest[]) => Reply = scriptedReply,
): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const held = heldAnswers();
  let seq = 0;
  const server = createServer(async (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "POST" || !path?.endsWith("/v1/messages")) {
      // count_tokens and the rest: a small answer that ends the request.
      res.writeHead(path?.endsWith("/count_tokens") ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify({ input_tokens: 100 }));
      return;
    }
    const body = (await readJson(req, res)) as MessagesRequest | null;
    if (body === null) return;
    const chat = chatOf(body);
    const own = !chat.messages.some((m) => m.role === "user") || (body.tools ?? []).length === 0;
    if (!own) requests.push(recordedOf(chat, (req.headers["x-api-key"] as string | undefined) ?? null));
    // The agent's own requests (no tools, or no prompt of the caller's): a plain short answer.
    const reply: Reply = own ? { kind: "text", text: "Scripted." } : script(chat, requests);
    if (reply.kind === "http") {
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(JSON.stringify(anthropicError(reply)));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if (reply.kind === "hang") return held.hang(res);
    if (reply.kind === "text" && !(await held.waitFor(reply, res))) return;
    const usage = reply.usage ?? { prompt_tokens: 100, completion_tokens: 10 };
    const event = (type: string, data: object) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event("message_start", {
      message: {
        id: `msg_${++seq}`,
        type: "message",
        role: "assistant",
        model: body.model ?? "scripted",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.prompt_tokens, output_tokens: 1 },
      },
    });
    let index = 0;
    const text = reply.kind === "text" ? reply.text : (reply.text ?? "");
    if (text) {
      event("content_block_start", { index, content_block: { type: "text", text: "" } });
      event("content_block_delta", { index, delta: { type: "text_delta", text } });
      event("content_block_stop", { index });
      index++;
    }
    if (reply.kind === "tool") {
      // Call ids depend only on the conversation, so they are the same whatever ran before.
      const turn = chat.messages.filter((m) => m.role === "assistant").length + 1;
      reply.calls.forEach((call, n) => {
        const { name, input } = (TOOLS[call.name] ?? ((args) => ({ name: call.name, input: args })))(call.args);
        event("content_block_start", {
          index,
          content_block: { type: "tool_use", id: `toolu_${turn}_${n}`, name, input: {} },
        });
        event("content_block_delta", {
          index,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(input) },
        });
        event("content_block_stop", { index });
        index++;
      });
    }
    const stop = reply.kind === "tool" ? "tool_use" : reply.finish === "length" ? "max_tokens" : "end_turn";
    event("message_delta", {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.completion_tokens },
    });
    event("message_stop", {});
    res.end();
  });
  return listenLoopback(server, held, requests);
}
