// What a run (warm-agent.ts) and a warm ACP agent's broker (acp-broker.ts, `server broker ID`, a
// detached process of its own) say to each other over the broker's Unix socket: the agent's ACP
// lines as they are, and a few lines of the broker's own, each a JSON object with one `oc_exec_broker`
// key, which no JSON-RPC message has. Pure: tested without processes.

export const BROKER_ENV = "OC_EXEC_BROKER";

/** What `server broker` is started with (in BROKER_ENV; the agent's environment is the broker's own). */
export type BrokerConfig = {
  id: string;
  /** The Unix socket runs connect to, in the registry's directory (readable by the user only). */
  socket: string;
  file: string;
  args: string[];
  cwd: string;
  /** The broker ends the agent and itself after this long without a run; 0 = never. */
  idleTimeoutMs: number;
  warmKey: string;
  /** --acp's value (for `server list`), and the agent's command line as shown. */
  name: string;
  command: string;
};

/** A line of the broker's own: to a run, its state when it connects, a log line of the agent's, the agent's end; from a run, `retire`. */
export type BrokerLine =
  | { oc_exec_broker: "ready" | "busy" }
  | { oc_exec_broker: "log"; line: string }
  | { oc_exec_broker: "exit"; exitCode: number | null; signal: string | null }
  | { oc_exec_broker: "retire" };

const PREFIX = '{"oc_exec_broker":';

export const brokerLine = (line: BrokerLine): string => `${JSON.stringify(line)}\n`;

/** The broker's own line, or null for a line of the protocol (a JSON-RPC message goes on as it is). */
export function readBrokerLine(line: string): BrokerLine | null {
  if (!line.startsWith(PREFIX)) return null;
  try {
    const value = JSON.parse(line) as BrokerLine;
    return typeof value.oc_exec_broker === "string" ? value : null;
  } catch {
    return null;
  }
}

/** What a JSON-RPC line is, as far as the broker must know: a request, a response, a notification. */
export type RpcShape =
  | { kind: "request"; id: string | number; method: string }
  | { kind: "response"; id: string | number }
  | { kind: "notification" }
  | { kind: "other" };

export function rpcShape(line: string): RpcShape {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { kind: "other" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { kind: "other" };
  const { id, method } = value as { id?: unknown; method?: unknown };
  const hasId = typeof id === "string" || typeof id === "number";
  if (typeof method === "string") return hasId ? { kind: "request", id, method } : { kind: "notification" };
  return hasId ? { kind: "response", id } : { kind: "other" };
}

/** The answer to a run's `initialize` that the agent already answered for the first run. */
export const initializeAnswer = (id: string | number, result: unknown): string =>
  `${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`;

/** The result of a response line, for the `initialize` the broker keeps. */
export function resultOf(line: string): unknown {
  try {
    return (JSON.parse(line) as { result?: unknown }).result ?? null;
  } catch {
    return null;
  }
}

/** Whole lines from a byte stream, the last partial one kept for the next chunk. */
export function lineReader(onLine: (line: string) => void) {
  let partial = "";
  return (chunk: Buffer) => {
    partial += chunk.toString("utf8");
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) onLine(line);
  };
}
