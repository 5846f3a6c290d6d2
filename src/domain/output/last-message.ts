// --output-last-message FILE: planned before the turn (the path checked, its directory pinned) and
// written after it through the safe writer: whole or not at all, and never through a link the
// sandboxed agent planted at the path or a temporary name during the turn.

import { dirname } from "node:path";
import type { LaunchProblem } from "../../kernel/problem.js";
import { notADirectory } from "../../sys/fs-checks.js";
import { type PlannedWrite, planWrite, writePlanned } from "../../sys/safe-write.js";

/** The file's plan, or the problem that stops the turn before it starts. */
export function planLastMessage(path: string, label: string): PlannedWrite | { problem: LaunchProblem } {
  const dir = dirname(path);
  const missing = notADirectory(dir);
  if (missing)
    return { problem: { name: "OutputPathError", message: `${label} ${path}: the directory ${dir} ${missing}` } };
  const plan = planWrite(path, { probe: true });
  return "problem" in plan
    ? { problem: { name: "OutputPathError", message: `${label} ${path}: ${plan.problem}` } }
    : plan;
}

/**
 * Writes the message. A refusal (the path became unsafe during the turn) is the turn's config
 * error; any other failure is a warning, and the turn's outcome stands.
 */
export function writeLastMessage(
  plan: PlannedWrite,
  text: string,
  label: string,
): { refused: LaunchProblem } | { failed: string } | null {
  const failed = writePlanned(plan, text);
  if (!failed) return null;
  if (failed.refused)
    return {
      refused: { name: "OutputPathRefused", message: `${label} ${plan.path} was not written: ${failed.problem}` },
    };
  return { failed: `could not write ${label} ${plan.path}: ${failed.problem}` };
}
