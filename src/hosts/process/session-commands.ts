// The opencode commands oc-exec runs after a turn: `export` (the session's model and cost, which
// the run stream never names) and `session delete` (ephemeral sessions).
import { lastLine, runSideCommand, type SideCommandOptions } from "../../domain/opencode/side-command.js";

import type { Launch } from "../sandbox/sandbox.js";

/** launch: how the command runs in the turn's sandbox, or null without one. */
export type SessionCommandContext = SideCommandOptions & {
  binary: string;
  env: Record<string, string>;
  launch: ((command: Launch) => Promise<Launch>) | null;
};

/** An opencode command after the turn, where the turn ran: in its sandbox when it had one. */
async function runOpencode(ctx: SessionCommandContext, args: string[]) {
  const command = { file: ctx.binary, args, env: ctx.env };
  const launched = ctx.launch ? await ctx.launch(command) : command;
  return runSideCommand(launched.file, launched.args, { ...ctx, env: launched.env });
}

type Exported = { model: string | null; costUsd: number | null };

const failed = (what: string, stderr: string) => `${what} failed${stderr.trim() ? `: ${lastLine(stderr)}` : ""}`;

/** Reads provider/model and the cost from `opencode export`, or says why it could not. */
export async function exportSession(
  ctx: SessionCommandContext,
  sessionId: string,
): Promise<Exported | { error: string }> {
  const out = await runOpencode(ctx, ["export", sessionId]);
  if (!out.ok || out.stdout.indexOf("{") === -1) return { error: failed(`opencode export ${sessionId}`, out.stderr) };
  return parseExport(out.stdout, sessionId);
}

/** The model and cost in `opencode export`'s output (its JSON follows a line or two of notices). */
export function parseExport(stdout: string, sessionId: string): Exported | { error: string } {
  const start = stdout.indexOf("{");
  if (start === -1) return { error: `opencode export ${sessionId} printed no JSON` };
  try {
    const data = JSON.parse(stdout.slice(start)) as {
      info?: { model?: { id?: string; providerID?: string }; cost?: number };
      messages?: { info?: { role?: string; modelID?: string; providerID?: string } }[];
    };
    const fromInfo =
      data.info?.model?.id && data.info.model.providerID ? `${data.info.model.providerID}/${data.info.model.id}` : null;
    const lastAssistant = data.messages?.filter((m) => m.info?.role === "assistant").at(-1)?.info;
    const fromMessage =
      lastAssistant?.modelID && lastAssistant.providerID
        ? `${lastAssistant.providerID}/${lastAssistant.modelID}`
        : null;
    const cost =
      typeof data.info?.cost === "number" && Number.isFinite(data.info.cost) && data.info.cost >= 0
        ? data.info.cost
        : null;
    return { model: fromMessage ?? fromInfo, costUsd: cost };
  } catch (error) {
    return { error: `opencode export ${sessionId} printed something that is not JSON: ${(error as Error).message}` };
  }
}

/**
 * The agents opencode knows in this workspace (`opencode agent list`: built-in, the user's and the
 * workspace's), or why it could not say. Each is a line `NAME (MODE)` followed by its permissions.
 */
export async function listAgents(ctx: SessionCommandContext): Promise<{ names: string[] } | { error: string }> {
  const out = await runOpencode(ctx, ["agent", "list"]);
  if (!out.ok) return { error: failed("opencode agent list", out.stderr) };
  const names = parseAgentList(out.stdout);
  return names.length > 0 ? { names } : { error: "opencode agent list printed no agent" };
}

function parseAgentList(stdout: string): string[] {
  return stdout.split("\n").flatMap((line) => {
    const m = /^(\S+) \((?:primary|subagent|all)\)$/.exec(line.trimEnd());
    return m ? [m[1]!] : [];
  });
}

export async function deleteSession(ctx: SessionCommandContext, sessionId: string): Promise<true | { error: string }> {
  const out = await runOpencode(ctx, ["session", "delete", sessionId]);
  return out.ok ? true : { error: failed(`opencode session delete ${sessionId}`, out.stderr) };
}
