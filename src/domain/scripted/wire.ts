// The scripted servers' shared vocabulary: the chat every script reads (OpenAI's shape; the other
// wire formats are translated into it), the replies scripts give, and the server handle tests hold.
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

export type Usage = { prompt_tokens: number; completion_tokens: number };

export type ModelServer = { url: string; port: number; requests: RecordedRequest[]; close(): Promise<void> };
