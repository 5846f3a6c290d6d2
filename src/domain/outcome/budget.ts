// The one budget checker, for a turn (its own limits, checked after every opencode line) and for
// many turns together (a batch's or conversation's limits, checked after every step). Pure: what
// was used and the limits in, the crossed limit and the 80% warnings out; the caller stops.

import type { Usage } from "../../contract/schema.js";
import type { WarningCode } from "../../contract/warning-codes.js";
import type { TurnFacts } from "../events/turn-facts.js";
import type { BudgetLimit, StopReason } from "./classify.js";

export type { BudgetLimit };

/** What a budget counts, whatever the scope. */
export type BudgetUse = Record<BudgetLimit, number>;

export type Budgets = {
  /** null = no limit. A limit of 0 never gets here: the resolver refuses it. */
  limits: Record<BudgetLimit, number | null>;
  /** What the caller calls each limit, for messages (--max-steps, maxSteps, max_steps). */
  names: Record<BudgetLimit, string>;
};

const WARN_FRACTION = 0.8;

/** Tokens as budgets count them, on every path: input + output + reasoning (cache reads are not new work). */
export const budgetTokens = (usage: Usage): number => usage.input + usage.output + usage.reasoning;

/** Costs are compared at 1e-8 dollars: summing floats must not cross a limit it did not cross. */
export const budgetCost = (costUsd: number): number => Math.round(costUsd * 1e8) / 1e8;

export type BudgetCheck = {
  warnings: { code: WarningCode; message: string }[];
  exceeded: Extract<StopReason, { kind: "budget" }> | null;
};

export function checkBudgets(used: BudgetUse, budgets: Budgets, warned: Set<BudgetLimit>): BudgetCheck {
  const out: BudgetCheck = { warnings: [], exceeded: null };
  for (const limit of ["steps", "tokens", "cost_usd"] as const) {
    const max = budgets.limits[limit];
    if (max === null) continue;
    const value = used[limit];
    if (value > max && out.exceeded === null)
      out.exceeded = { kind: "budget", limit, max, used: value, option: budgets.names[limit] };
    else if (value >= max * WARN_FRACTION && !warned.has(limit)) {
      warned.add(limit);
      out.warnings.push({
        code: "budget_warning",
        message: `${budgets.names[limit]} ${max}: ${value} used, ${Math.round((value / max) * 100)}% of the limit`,
      });
    }
  }
  return out;
}

/** What one turn used so far: steps started, tokens and cost over its steps. */
export const turnUse = (facts: Pick<TurnFacts, "steps" | "usage" | "costUsd">): BudgetUse => ({
  steps: facts.steps,
  tokens: budgetTokens(facts.usage),
  cost_usd: budgetCost(facts.costUsd),
});
