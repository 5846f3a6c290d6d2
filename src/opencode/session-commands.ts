// The opencode commands oc-exec runs after a turn: `export` (the session's model and cost, which
// the run stream never names) and `session delete` (for --ephemeral). Each has a bounded time.
import { execFile } from "node:child_process";

export type SessionCommandContext = { binary: string; env: Record<string, string>; cwd: string; timeoutMs: number };

function run(ctx: SessionCommandContext, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      ctx.binary,
      args,
      {
        env: ctx.env,
        cwd: ctx.cwd,
        timeout: ctx.timeoutMs,
        killSignal: "SIGKILL",
        maxBuffer: 256 * 1024 * 1024,
        encoding: "utf8",
      },
      (error, stdout, stderr) => resolve({ ok: !error, stdout, stderr }),
    );
  });
}

export type Exported = { model: string | null; costUsd: number | null };

/** Reads provider/model and the cost from `opencode export`, or says why it could not. */
export async function exportSession(
  ctx: SessionCommandContext,
  sessionId: string,
): Promise<Exported | { error: string }> {
  const out = await run(ctx, ["export", sessionId]);
  const start = out.stdout.indexOf("{");
  if (!out.ok || start === -1)
    return {
      error: `opencode export ${sessionId} failed${out.stderr.trim() ? `: ${out.stderr.trim().split("\n").at(-1)}` : ""}`,
    };
  try {
    const data = JSON.parse(out.stdout.slice(start)) as {
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

export async function deleteSession(ctx: SessionCommandContext, sessionId: string): Promise<true | { error: string }> {
  const out = await run(ctx, ["session", "delete", sessionId]);
  return out.ok
    ? true
    : {
        error: `opencode session delete ${sessionId} failed${out.stderr.trim() ? `: ${out.stderr.trim().split("\n").at(-1)}` : ""}`,
      };
}
