// Builds the final `result` event from the turn's facts and its classification.

import { exitCodeOf } from "../../contract/exit-codes.js";
import type { EventOf, FileChange } from "../../contract/schema.js";
import type { ProcessEnd } from "../../sys/process.js";
import type { TurnFacts } from "../events/turn-facts.js";
import type { Outcome } from "./classify.js";

export type ResultDraft = Omit<EventOf<"result">, "seq" | "time" | "session_id">;

export type ResultMeta = {
  durationMs: number;
  model: string | null;
  process: ProcessEnd | null;
  costUsd?: number;
  structuredOutput?: { value: unknown };
  sessionDeleted?: boolean;
  workspaceChanges?: { source: "git" | "tools"; files: FileChange[] };
  sandbox?: ResultDraft["sandbox"];
  verification?: ResultDraft["verification"];
  attempts?: { attempts: number; failed: NonNullable<ResultDraft["failed_attempts"]> };
  outputPatch?: ResultDraft["output_patch"];
};

export function buildResult(facts: TurnFacts, outcome: Outcome, meta: ResultMeta): ResultDraft {
  const extras: Partial<ResultDraft> = {};
  if (meta.structuredOutput) extras.structured_output = meta.structuredOutput.value;
  if (meta.sessionDeleted !== undefined) extras.session_deleted = meta.sessionDeleted;
  if (meta.verification) extras.verification = meta.verification;
  if (meta.attempts) {
    extras.attempts = meta.attempts.attempts;
    extras.failed_attempts = meta.attempts.failed;
  }
  if (meta.workspaceChanges) extras.workspace_changes = meta.workspaceChanges;
  if (meta.sandbox) extras.sandbox = meta.sandbox;
  if (meta.outputPatch) extras.output_patch = meta.outputPatch;
  return {
    type: "result",
    ok: outcome.class === "success",
    exit_code: exitCodeOf(outcome.class),
    class: outcome.class,
    error: outcome.error,
    model: meta.model,
    text: facts.finalText,
    usage: { ...facts.usage },
    // The steps' costs added in stream order, exactly as a consumer adding step.finished.cost_usd
    // gets it; rounding here made the two disagree (0.0003632 against 0.000363204).
    cost_usd: meta.costUsd ?? facts.costUsd,
    duration_ms: Math.max(0, Math.round(meta.durationMs)),
    steps: facts.steps,
    tools: { ...facts.tools },
    files_changed: facts.filesChanged.map((c) => ({ ...c })),
    permission_denials: facts.permissionDenials.map((d) => ({ ...d })),
    opencode: { exit_code: meta.process?.exitCode ?? null, signal: meta.process?.signal ?? null },
    ...extras,
    stream: { ...facts.stream },
  };
}
