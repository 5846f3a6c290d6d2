// Builds the final `result` event from the turn's facts and its classification.
import type { TurnFacts } from "../events/normalize.js";
import type { EventOf } from "../events/schema.js";
import type { Outcome, ProcessEnd } from "./classify.js";
import { exitCodeOf } from "./exit-codes.js";

export type ResultDraft = Omit<EventOf<"result">, "seq" | "time" | "session_id">;

export function buildResult(facts: TurnFacts, outcome: Outcome, meta: { durationMs: number; model: string | null; process: ProcessEnd | null }): ResultDraft {
  return {
    type: "result",
    ok: outcome.class === "success",
    exit_code: exitCodeOf(outcome.class),
    class: outcome.class,
    error: outcome.error,
    model: meta.model,
    text: facts.finalText,
    usage: { ...facts.usage },
    // Float sums drift (0.1 + 0.2); cost is reported to a millionth of a cent.
    cost_usd: Math.round(facts.costUsd * 1e8) / 1e8,
    duration_ms: Math.max(0, Math.round(meta.durationMs)),
    steps: facts.steps,
    tools: { ...facts.tools },
    files_changed: facts.filesChanged.map((c) => ({ ...c })),
    permission_denials: facts.permissionDenials.map((d) => ({ ...d })),
    opencode: { exit_code: meta.process?.exitCode ?? null, signal: meta.process?.signal ?? null },
    stream: { ...facts.stream },
  };
}
