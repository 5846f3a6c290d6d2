// Live budgets: after every opencode line, compare what the turn used with maxSteps, maxTokens and
// maxCostUsd. Pure; the runner stops the turn when a limit is crossed.
import type { WarningCode } from "../contract/warning-codes.js";
import type { TurnFacts } from "../events/normalize.js";
import type { BudgetLimit, StopReason } from "../outcome/classify.js";
import { BUDGET_OPTION, type OptionLabels } from "../outcome/labels.js";

export type Budgets = {
  maxSteps: number | null;
  maxTokens: number | null;
  maxCostUsd: number | null;
  labels: OptionLabels;
};

const WARN_FRACTION = 0.8;

function usedOf(facts: TurnFacts, limit: BudgetLimit): number {
  if (limit === "steps") return facts.steps;
  if (limit === "tokens") return facts.usage.input + facts.usage.output + facts.usage.reasoning;
  return Math.round(facts.costUsd * 1e8) / 1e8;
}

export type BudgetCheck = {
  warnings: { code: WarningCode; message: string }[];
  exceeded: Extract<StopReason, { kind: "budget" }> | null;
};

export function checkBudgets(facts: TurnFacts, budgets: Budgets, warned: Set<BudgetLimit>): BudgetCheck {
  const out: BudgetCheck = { warnings: [], exceeded: null };
  const limits: [BudgetLimit, number | null][] = [
    ["steps", budgets.maxSteps],
    ["tokens", budgets.maxTokens],
    ["cost_usd", budgets.maxCostUsd],
  ];
  for (const [limit, max] of limits) {
    if (max === null) continue;
    const used = usedOf(facts, limit);
    if (used > max && out.exceeded === null) out.exceeded = { kind: "budget", limit, max, used };
    else if (used >= max * WARN_FRACTION && !warned.has(limit)) {
      warned.add(limit);
      out.warnings.push({
        code: "budget_warning",
        message: `${budgets.labels[BUDGET_OPTION[limit]]} ${max}: ${used} used, ${Math.round((used / max) * 100)}% of the limit`,
      });
    }
  }
  return out;
}
