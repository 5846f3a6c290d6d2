// --fail-on: conditions a caller can name that turn a turn opencode calls successful into a
// failure (agent_error), because the work they wanted did not happen. Pure.
import type { ErrorDetail, FileChange } from "../../contract/schema.js";
import type { TurnFacts } from "../events/turn-facts.js";

export const FAIL_ON_CONDITIONS = {
  "tool-error": "a tool call ended in error",
  "no-changes": "no file changed",
  "no-message": "the turn ended with no final assistant message",
  "mcp-unavailable": "an MCP server did not start, so its tools were missing",
} as const;

export type FailOn = keyof typeof FAIL_ON_CONDITIONS;

export function isFailOn(name: string): name is FailOn {
  return Object.hasOwn(FAIL_ON_CONDITIONS, name);
}

const clip = (text: string, max = 300) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The first condition that holds, as the turn's error, or null. Conditions are checked in the order given. */
export function failOnError(
  facts: TurnFacts,
  conditions: readonly FailOn[],
  label: string,
  workspace: { source: "git" | "tools"; files: FileChange[] } | null = null,
): ErrorDetail | null {
  for (const condition of conditions) {
    const why = evidence(facts, condition, workspace);
    if (why === null) continue;
    return {
      name: "FailOnCondition",
      message: `${label} ${condition}: ${why}`,
      status_code: null,
      retryable: null,
    };
  }
  return null;
}

function evidence(
  facts: TurnFacts,
  condition: FailOn,
  workspace: { source: "git" | "tools"; files: FileChange[] } | null,
): string | null {
  switch (condition) {
    case "tool-error": {
      const [first, ...more] = facts.failedTools;
      if (!first) return null;
      const call = first.callId ? ` (call ${first.callId})` : "";
      const also = more.length > 0 ? `; ${more.length} more tool call(s) failed` : "";
      return `tool ${first.tool}${call} failed: ${clip(first.error ?? "no error text")}${also}`;
    }
    case "no-changes":
      // What changed in the workspace, by whatever means (a tool's write or a command's), when known.
      if (workspace)
        return workspace.files.length === 0
          ? `no file changed${workspace.source === "git" ? " in the workspace (compared with git's view before the turn)" : ""}`
          : null;
      return facts.filesChanged.length === 0 ? "no file changed" : null;
    case "mcp-unavailable": {
      const [first, ...more] = facts.mcpUnavailable;
      if (!first) return null;
      return `MCP server ${first} did not start${more.length > 0 ? ` (nor ${more.join(", ")})` : ""}`;
    }
    case "no-message":
      return facts.finalText === null ? "the turn ended with no final assistant message" : null;
  }
}
