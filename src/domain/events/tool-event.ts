// A finished opencode tool_use part as an oc-exec tool event: status (denied is recognized from
// the error text), capped output, duration. Pure.

import type { EventDraft } from "../../contract/schema.js";
import { redact } from "./redact.js";
import { type Json, readNumber, readObject, readString } from "./upstream.js";

const DENIAL_TEXT = [
  /rejected permission/i,
  /specified a rule which prevents you/i,
  /permission (was )?denied/i,
  // 2.x: "The user declined this tool call", or its reply to the model when it goes on without it.
  /declined this tool call/i,
  /cannot ask the user for permission/i,
  // Copilot CLI (ACP): "The user rejected this tool call."
  /rejected this tool call/i,
];

/**
 * The tool call's id: `callID` on 1.x. 2.x names the part `partID` and puts the call id in `id`
 * (packages/cli/src/run/noninteractive.ts in opencode's repository).
 */
function callIdOf(part: Json): string | null {
  const v1 = readString(part, "callID") ?? readString(part, "callId");
  if (v1 !== null) return v1;
  return readString(part, "partID") !== null ? readString(part, "id") : null;
}

/** 1.x times a call in state.time, some 2.x captures in part.time. */
function durationOf(part: Json, state: Json | null): number | null {
  const time = readObject(state, "time") ?? readObject(part, "time");
  const start = readNumber(time, "start");
  const end = readNumber(time, "end");
  return start !== null && end !== null && end >= start ? Math.round(end - start) : null;
}

/** Caps a string at maxBytes of UTF-8 without splitting a character. */
export function capUtf8(text: string, maxBytes: number): { text: string; truncated: boolean } {
  if (text.length <= maxBytes / 3) return { text, truncated: false };
  // Every UTF-16 unit is at least one UTF-8 byte, so only the first maxBytes units can survive:
  // encode those, not a 10 MB tool output.
  const head = text.length > maxBytes ? text.slice(0, maxBytes) : text;
  const buf = Buffer.from(head, "utf8");
  if (buf.length <= maxBytes && head === text) return { text, truncated: false };
  if (buf.length <= maxBytes) return { text: head, truncated: true };
  let end = maxBytes;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return { text: buf.subarray(0, end).toString("utf8"), truncated: true };
}

export type ToolDraft = Extract<EventDraft, { type: "tool" }>;

/** The tool's name and call id while it is still pending or running, else null. */
export function runningToolOf(part: Json): { tool: string; callId: string | null } | null {
  const status = readString(readObject(part, "state"), "status");
  if (status !== "pending" && status !== "running") return null;
  return { tool: readString(part, "tool")!, callId: callIdOf(part) };
}

/** null while the tool is still pending or running (a later line reports it finished). */
/** Tools opencode knows; a call to one of them that comes back as `invalid` was removed by policy. */
const KNOWN_TOOLS = new Set([
  "bash",
  "edit",
  "write",
  "multiedit",
  "patch",
  "apply_patch",
  "read",
  "glob",
  "grep",
  "list",
  "lsp",
  "webfetch",
  "websearch",
  "codesearch",
  "task",
  "todowrite",
  "todoread",
  "skill",
  "question",
]);

/** The permission key a tool call needs. */
function permissionOf(tool: string): string {
  return ["write", "multiedit", "patch", "apply_patch"].includes(tool) ? "edit" : tool;
}

/** What a permission rule matches for a call: the command, the path or the URL it names. */
function patternOf(input: unknown): string | null {
  for (const key of ["command", "filePath", "file_path", "path", "url", "pattern"]) {
    const v = readString(input, key);
    if (v !== null) return v;
  }
  return null;
}

/**
 * A denial that needs no partner: a rule of the policy refused the call (1.18: "The user has
 * specified a rule which prevents you…"), or the tool was not offered at all and the model's call
 * came back as the `invalid` tool. opencode prints no "permission requested" notice for either.
 */
export type RuleDenial = { permission: string; pattern: string | null };

export type ToolEvent = {
  draft: ToolDraft;
  state: Json | null;
  ruleDenial: RuleDenial | null;
  /** The model called a tool the agent does not offer, and no rule of oc-exec's policy removed it. */
  unavailable: string | null;
};

/** null while the tool is still pending or running (a later line reports it finished). */
export function toolEventOf(
  part: Json,
  maxOutputBytes: number,
  removedByPolicy: (permission: string) => boolean = () => false,
): ToolEvent | null {
  const state = readObject(part, "state");
  const rawStatus = readString(state, "status");
  if (rawStatus === "pending" || rawStatus === "running") return null;
  const removed = removedToolOf(part, state, removedByPolicy);
  if (removed) return removed;
  const tool = readString(part, "tool")!;
  const errorText = readString(state, "error");
  const denied = rawStatus === "error" && errorText !== null && DENIAL_TEXT.some((re) => re.test(errorText));
  const byRule = denied && /specified a rule which prevents you/i.test(errorText!);
  let output: string | null = null;
  let truncated = false;
  const rawOutput = state?.output;
  if (rawOutput !== undefined && rawOutput !== null) {
    const capped = capUtf8(typeof rawOutput === "string" ? rawOutput : JSON.stringify(rawOutput), maxOutputBytes);
    output = capped.text;
    truncated = capped.truncated;
  }
  // Redacted with the rest of the event where every event passes (engine/turn-core.ts).
  const input = state && "input" in state ? state.input : null;
  return {
    state,
    ruleDenial: byRule ? { permission: permissionOf(tool), pattern: patternOf(input) } : null,
    unavailable: null,
    draft: {
      type: "tool",
      call_id: callIdOf(part),
      tool,
      status: denied ? "denied" : rawStatus === "completed" ? "completed" : "error",
      input,
      output,
      output_truncated: truncated,
      error: errorText === null ? null : redact(errorText),
      title: readString(state, "title"),
      duration_ms: durationOf(part, state),
    },
  };
}

/**
 * opencode's `invalid` tool standing for a call to a tool the agent does not offer. When oc-exec's
 * policy removed that tool, the call is the policy's refusal: denied. Otherwise (the agent's or
 * opencode's own configuration never offered it, a model that guessed a tool) it is a failed call
 * the model may well recover from, and the turn is judged by how it ends.
 */
function removedToolOf(
  part: Json,
  state: Json | null,
  removedByPolicy: (permission: string) => boolean,
): ToolEvent | null {
  if (readString(part, "tool") !== "invalid") return null;
  const input = readObject(state, "input");
  const asked = readString(input, "tool");
  const why = readString(input, "error");
  if (asked === null || !KNOWN_TOOLS.has(asked) || why === null || !/unavailable tool/i.test(why)) return null;
  const byPolicy = removedByPolicy(permissionOf(asked));
  return {
    state,
    ruleDenial: byPolicy ? { permission: permissionOf(asked), pattern: null } : null,
    unavailable: byPolicy ? null : asked,
    draft: {
      type: "tool",
      call_id: callIdOf(part),
      tool: asked,
      status: byPolicy ? "denied" : "error",
      input: null,
      output: null,
      output_truncated: false,
      error: redact(why),
      title: null,
      duration_ms: durationOf(part, state),
    },
  };
}
