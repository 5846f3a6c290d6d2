// The turn as `opencode run` takes it (a local process or one over ssh): the plan's session and
// placement fields under the names buildInvocation reads.
import type { InvocationInput } from "../domain/opencode/invocation.js";
import type { ResolvedTurn } from "./resolve-options.js";

export type RunFields = Pick<
  InvocationInput,
  "model" | "agent" | "variant" | "thinking" | "session" | "continue" | "fork" | "files" | "pure" | "auto"
>;

export function runFields(plan: ResolvedTurn): RunFields {
  return {
    model: plan.turn.model,
    agent: plan.turn.agent?.name ?? null,
    variant: plan.turn.variant,
    thinking: plan.turn.thinking,
    session: plan.session.id,
    continue: plan.session.continue,
    fork: plan.session.fork,
    files: plan.turn.files.paths,
    pure: plan.placement.pure,
    auto: plan.turn.auto,
  };
}
