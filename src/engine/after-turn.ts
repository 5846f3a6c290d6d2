// Work after the upstream source ended and before the result is written: export (model and cost),
// the ephemeral session's deletion, the output-schema check and the last-message file. Returns
// what it found; its warnings go out as events. What differs by backend (how a session is exported
// or deleted) comes in as SessionOps.

import type { Normalizer } from "../domain/events/normalize.js";
import type { StopReason } from "../domain/outcome/classify.js";
import { writeLastMessage } from "../domain/output/last-message.js";
import type { ResolvedTurn } from "../plan/resolve-options.js";
import type { PlannedWrite } from "../sys/safe-write.js";
import type { SessionOps } from "./backend.js";
import { checkStructuredOutput } from "./structured-output.js";

export type AfterTurn = {
  model: string | null;
  costUsd: number | undefined;
  structuredOutput: { value: unknown } | undefined;
  sessionDeleted: boolean | undefined;
  /** The final answer failed the output schema. */
  outputError: string | null;
  /** The last-message file was refused: its path became a link, or its directory moved, during the turn. */
  refusedWrite: { name: string; message: string } | null;
};

const STOPPED_BY_USER = new Set<StopReason["kind"]>(["interrupted", "terminated", "broken_pipe"]);

export async function afterTurn(
  options: ResolvedTurn,
  normalizer: Normalizer,
  ops: SessionOps,
  stop: StopReason | null,
  /** The last-message file as planned before the turn (prepare.ts). */
  output: PlannedWrite | null,
): Promise<AfterTurn> {
  const facts = normalizer.facts;
  const after: AfterTurn = {
    model: options.turn.model,
    costUsd: undefined,
    structuredOutput: undefined,
    sessionDeleted: undefined,
    outputError: null,
    refusedWrite: null,
  };
  // What opencode itself said it used beats what was asked for (an agent may switch models).
  after.model = facts.model ?? options.turn.model;
  const wanted = options.turn.export ?? after.model === null;
  if (ops.export && facts.sessionId && wanted && !(stop && STOPPED_BY_USER.has(stop.kind))) {
    const exported = await ops.export(facts.sessionId);
    if ("error" in exported) normalizer.warning("export_failed", exported.error);
    else {
      after.model = exported.model ?? after.model;
      if (facts.costUsd === 0 && exported.costUsd) after.costUsd = exported.costUsd;
    }
  }
  if (options.session.ephemeral) {
    const id = facts.sessionId ?? ops.sessionId;
    const deleted = id ? await ops.delete(id) : { error: null };
    after.sessionDeleted = deleted === true;
    if (deleted !== true && deleted.error) normalizer.warning("delete_failed", deleted.error);
  }
  if (options.turn.outputSchema && stop === null) {
    const check = checkStructuredOutput(
      options.turn.outputSchema.schema,
      facts.finalText,
      options.turn.outputSchema.option,
    );
    if ("value" in check) after.structuredOutput = check;
    else after.outputError = check.error;
  }
  if (output && facts.finalText !== null) {
    const written = writeLastMessage(
      output,
      options.turn.redactor.text(facts.finalText),
      options.turn.outputLastMessage!.option,
    );
    if (written && "refused" in written) after.refusedWrite = written.refused;
    else if (written) normalizer.warning("output_last_message_failed", written.failed);
  }
  return after;
}
