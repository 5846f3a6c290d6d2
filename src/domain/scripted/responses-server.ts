// The scripted model in OpenAI's Responses API (POST /v1/responses, streamed as server-sent events),
// the API Codex speaks: the same scripts as the chat-completions server, their chat read from the
// request's input items and their replies written as the API's stream of events.
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

type Item = {
  type?: string;
  role?: string;
  content?: unknown;
  name?: string;
  arguments?: string;
  input?: string;
  call_id?: string;
  output?: unknown;
};
type Tool = { type?: string; name?: string };
type ResponsesRequest = { model?: string; input?: string | Item[]; tools?: Tool[]; stream?: boolean };

/** An input or output item's text: a string, or its text parts (input_text, output_text). */
function itemText(content: unknown): string | null {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const texts = content.flatMap((p) =>
    p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string"
      ? [(p as { text: string }).text]
      : [],
  );
  return texts.length > 0 ? texts.join("") : null;
}

/**
 * The input items as the chat the scripts read: the caller's prompt (the first user text naming a
 * scenario; the agent's own context before it, instructions and environment, is left out), what
 * the model said and called, and the calls' results.
 */
function chatOf(body: ResponsesRequest): ChatRequest {
  const items: Item[] = typeof body.input === "string" ? [{ role: "user", content: body.input }] : (body.input ?? []);
  const messages: ChatMessage[] = [];
  let prompt = false;
  for (const item of items) {
    const type = item.type ?? "message";
    if (type === "message") {
      const text = itemText(item.content);
      if (text === null) continue;
      if (item.role === "assistant") messages.push({ role: "assistant", content: text });
      else if (item.role !== "user") continue;
      else if (!prompt && /scenario:/.test(text)) {
        prompt = true;
        messages.unshift({ role: "user", content: text });
      } else if (prompt) messages.push({ role: "user", content: text });
    } else if (/_call$/.test(type)) messages.push({ role: "assistant", tool_calls: [item] });
    else if (/_call_output$/.test(type))
      messages.push({
        role: "tool",
        content: typeof item.output === "string" ? item.output : JSON.stringify(item.output),
      });
  }
  return { model: body.model, messages };
}

/** A call as the API returns it: a function's JSON arguments, or a custom (free-form) tool's input. */
type OutputCall =
  | { type: "function_call"; name: string; arguments: string }
  | { type: "custom_tool_call"; name: string; input: string };

/** A new file as an apply_patch patch. */
function addFilePatch(path: string, content: string): string {
  const lines = content.endsWith("\n") ? content.slice(0, -1).split("\n") : content.split("\n");
  return ["*** Begin Patch", `*** Add File: ${path}`, ...lines.map((l) => `+${l}`), "*** End Patch"].join("\n");
}

/**
 * The scripts' tool calls (opencode's bash, write, read) as the tools the request offers: Codex's
 * shell (shell_command with a command line, exec_command with `cmd`, or shell with argv words) and
 * apply_patch (free-form or a function taking {input}); a file read is a `cat`.
 */
function asOffered(call: { name: string; args: Record<string, unknown> }, tools: Tool[]): OutputCall {
  const offered = (name: string) => tools.find((t) => t.name === name);
  const shell = (command: string): OutputCall | null => {
    if (offered("shell_command"))
      return { type: "function_call", name: "shell_command", arguments: JSON.stringify({ command }) };
    if (offered("exec_command"))
      return { type: "function_call", name: "exec_command", arguments: JSON.stringify({ cmd: command }) };
    if (offered("shell"))
      return { type: "function_call", name: "shell", arguments: JSON.stringify({ command: ["bash", "-lc", command] }) };
    return null;
  };
  const a = call.args;
  if (call.name === "bash" && typeof a.command === "string") {
    const mapped = shell(a.command);
    if (mapped) return mapped;
  }
  if (call.name === "write" && typeof a.filePath === "string" && typeof a.content === "string") {
    const patch = addFilePatch(a.filePath, a.content);
    const tool = offered("apply_patch");
    if (tool?.type === "custom") return { type: "custom_tool_call", name: "apply_patch", input: patch };
    if (tool) return { type: "function_call", name: "apply_patch", arguments: JSON.stringify({ input: patch }) };
  }
  if (call.name === "read" && typeof a.filePath === "string") {
    const mapped = shell(`cat ${JSON.stringify(a.filePath)}`);
    if (mapped) return mapped;
  }
  return { type: "function_call", name: call.name, arguments: JSON.stringify(a) };
}

/** The API's word for a context overflow, which it reports in the stream (response.failed). */
const OVERFLOW = "Your input exceeds the context window of this model. Please adjust your input and try again.";

export async function startResponsesServer(
  script: (body: ChatRequest, seen: readonly RecordedRequest[]) => Reply = scriptedReply,
): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const held = heldAnswers();
  let seq = 0;
  const server = createServer(async (req, res) => {
    const path = (req.url ?? "").split("?")[0] ?? "";
    if (req.method !== "POST" || !path.endsWith("/responses")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}`, type: "invalid_request_error" } }));
      return;
    }
    const body = (await readJson(req, res)) as ResponsesRequest | null;
    if (body === null) return;
    const chat = chatOf(body);
    // The agent's own requests (no prompt of the caller's, or no tools): a plain short answer.
    const own = !chat.messages.some((m) => m.role === "user") || (body.tools ?? []).length === 0;
    if (!own) requests.push(recordedOf(chat, req.headers.authorization ?? null));
    const reply: Reply = own ? { kind: "text", text: "Scripted." } : script(chat, requests);
    const id = `resp_${++seq}`;
    const model = body.model ?? "scripted";
    let sequence = 0;
    const event = (type: string, data: object) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
    const response = (status: string, extra: object = {}) => ({
      id,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status,
      model,
      output: [],
      ...extra,
    });
    if (reply.kind === "http") {
      const code = (reply.body as { error?: { code?: unknown } } | null)?.error?.code;
      if (code === "context_length_exceeded") {
        // The input does not fit: the stream starts, then fails with the error's code.
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        event("response.created", { response: response("in_progress") });
        const error = { code, message: errorMessage(reply, OVERFLOW) };
        event("response.failed", { response: response("failed", { error }) });
        res.end();
        return;
      }
      // OpenAI's errors are the scripts' own shape; overloaded is its 503.
      const overloaded = reply.status === 529;
      res.writeHead(overloaded ? 503 : reply.status, { "content-type": "application/json", ...reply.headers });
      const said = errorMessage(reply, OVERFLOW);
      const answer = overloaded
        ? { error: { message: said, type: "server_error", code: "server_is_overloaded" } }
        : reply.body;
      res.end(JSON.stringify(answer));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if (reply.kind === "hang") return held.hang(res);
    if (reply.kind === "text" && !(await held.waitFor(reply, res))) return;
    const usage = reply.usage ?? { prompt_tokens: 100, completion_tokens: 10 };
    event("response.created", { response: response("in_progress") });
    const output: object[] = [];
    const text = reply.kind === "text" ? reply.text : (reply.text ?? "");
    if (text) {
      const index = output.length;
      const item_id = `msg_${seq}_${index}`;
      const item = { id: item_id, type: "message", role: "assistant", status: "in_progress", content: [] };
      event("response.output_item.added", { output_index: index, item });
      const at = { item_id, output_index: index, content_index: 0 };
      event("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [] } });
      // In two deltas, as the API streams.
      const mid = Math.floor(text.length / 2);
      event("response.output_text.delta", { ...at, delta: text.slice(0, mid) });
      event("response.output_text.delta", { ...at, delta: text.slice(mid) });
      event("response.output_text.done", { ...at, text });
      const part = { type: "output_text", text, annotations: [] };
      event("response.content_part.done", { ...at, part });
      const done = { ...item, status: "completed", content: [part] };
      event("response.output_item.done", { output_index: index, item: done });
      output.push(done);
    }
    if (reply.kind === "tool") {
      // Call ids depend only on the conversation, so they are the same whatever ran before.
      const turn = chat.messages.filter((m) => m.role === "assistant").length + 1;
      reply.calls.forEach((call, n) => {
        const index = output.length;
        const mapped = asOffered(call, body.tools ?? []);
        const base = { id: `fc_${seq}_${index}`, call_id: `call_${turn}_${n}` };
        if (mapped.type === "function_call") {
          const item = { ...base, type: "function_call", name: mapped.name, arguments: "", status: "in_progress" };
          event("response.output_item.added", { output_index: index, item });
          event("response.function_call_arguments.delta", {
            item_id: base.id,
            output_index: index,
            delta: mapped.arguments,
          });
          event("response.function_call_arguments.done", {
            item_id: base.id,
            output_index: index,
            arguments: mapped.arguments,
          });
          const done = { ...item, arguments: mapped.arguments, status: "completed" };
          event("response.output_item.done", { output_index: index, item: done });
          output.push(done);
        } else {
          const item = { ...base, type: "custom_tool_call", name: mapped.name, input: "", status: "in_progress" };
          event("response.output_item.added", { output_index: index, item });
          event("response.custom_tool_call_input.delta", {
            item_id: base.id,
            output_index: index,
            delta: mapped.input,
          });
          event("response.custom_tool_call_input.done", { item_id: base.id, output_index: index, input: mapped.input });
          const done = { ...item, input: mapped.input, status: "completed" };
          event("response.output_item.done", { output_index: index, item: done });
          output.push(done);
        }
      });
    }
    const tokens = {
      input_tokens: usage.prompt_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.completion_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
    };
    if (reply.kind === "text" && reply.finish === "length")
      event("response.incomplete", {
        response: response("incomplete", {
          output,
          usage: tokens,
          incomplete_details: { reason: "max_output_tokens" },
        }),
      });
    else event("response.completed", { response: response("completed", { output, usage: tokens }) });
    res.end();
  });
  return listenLoopback(server, held, requests, "/v1");
}
