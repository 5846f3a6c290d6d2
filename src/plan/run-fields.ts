// The turn as `opencode run` takes it (a local process or one over ssh): the plan's session and
// placement fields under the names buildInvocation reads.
import type { InvocationInput } from "../domain/opencode/invocation.js";
import type { ResolvedTurn } from "./resolve-options.js";

export type RunFields = Pick<
  InvocationInput,
  "model" | "agent" | "variant" | "thinking" | "session" | "continue" | "fork" | "files" | "pure" | "auto"
>;

export function runFields(turn: ResolvedTurn): RunFields {
  return {
    model: turn.model,
    agent: turn.agent?.name ?? null,
    variant: turn.variant,
    thinking: turn.thinking,
    session: turn.session.id,
    continue: turn.session.continue,
    fork: turn.session.fork,
    files: turn.files.paths,
    pure: turn.placement.pure,
    auto: turn.auto,
  };
}
