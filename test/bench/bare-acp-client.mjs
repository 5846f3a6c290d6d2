// The least a client of an agent's ACP mode can do for one prompt, for the agents bench's floor:
// start the agent (argv after `--`), initialize, a new session in the current directory, the
// prompt, every permission granted once, the answer's text on stdout, and the agent's process group
// killed at once. No policy, events, checks or result: what oc-exec --acp adds over this is oc-exec's.
//   node bare-acp-client.mjs PROMPT -- AGENT ARGS...
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const [prompt, dashes, file, ...args] = process.argv.slice(2);
if (dashes !== "--" || !file) {
  process.stderr.write("usage: bare-acp-client.mjs PROMPT -- AGENT ARGS...\n");
  process.exit(2);
}
const agent = spawn(file, args, { stdio: ["pipe", "pipe", "ignore"], detached: true });
const killAll = () => {
  try {
    process.kill(-agent.pid, "SIGKILL");
  } catch {
    // already gone
  }
};
let text = "";
const connection = client()
  .onRequest("session/request_permission", ({ params }) => {
    const allow = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onNotification("session/update", ({ params }) => {
    const update = params.update;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") text += update.content.text;
  })
  .connect(ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout)));
try {
  await connection.agent.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const { sessionId } = await connection.agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
  const { stopReason } = await connection.agent.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: prompt }],
  });
  process.stdout.write(`${JSON.stringify({ stopReason, text })}\n`);
  process.exitCode = stopReason === "end_turn" ? 0 : 1;
} catch (error) {
  process.stderr.write(`bare-acp-client: ${error?.message ?? error}\n`);
  process.exitCode = 1;
} finally {
  killAll();
  process.exit();
}
