// What the compatibility policy (README, "Schema compatibility") promises a consumer who validates
// with the published schema, and what it keeps from oc-exec itself.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EventSchema } from "../../src/contract/schema.js";
import { WARNING_CODES } from "../../src/contract/warning-codes.js";
import { loadFixture } from "../support/fixtures.js";
import { replayStreams } from "../support/replay.js";
import { PUBLISHED_SCHEMA, validate } from "../support/schema-check.js";

const published = PUBLISHED_SCHEMA as { $defs: Record<string, unknown>; oneOf: unknown[] };
const text = readFileSync(new URL("../../schemas/oc-exec-events.schema.json", import.meta.url), "utf8");
const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const fixture = loadFixture("1.18.33", "tool")!;
const { events, result } = replayStreams(fixture.stdout, fixture.stderr);

describe("the published schema is a document people read", () => {
  it("has one definition per event type and shared definitions in $defs", () => {
    expect(Object.keys(published.$defs).sort()).toEqual(
      [
        "RunStarted",
        "SessionStarted",
        "StepStarted",
        "StepFinished",
        "Message",
        "MessageDelta",
        "Reasoning",
        "Tool",
        "PermissionDenied",
        "FileChanged",
        "Warning",
        "Error",
        "Retry",
        "VerifyStarted",
        "VerifyFinished",
        "Result",
        "BatchResult",
        "TaskOutcome",
        "ConversationResult",
        "FutureEvent",
        "Timestamp",
        "SessionId",
        "Usage",
        "OutcomeClass",
        "ErrorDetail",
        "FileChange",
        "PermissionDenial",
      ].sort(),
    );
    // The date-time pattern is written once.
    expect(text.match(/"format": "date-time"/g)).toHaveLength(1);
  });
});

describe("within schema version 1", () => {
  const tool = events.find((e) => e.type === "tool")!;

  it("a field added to an event still validates against the published schema", () => {
    expect(validate({ ...tool, added_in_a_later_minor: { any: "value" } })).toBe(true);
    expect(validate({ ...result, usage: { ...result.usage, audio: 12 } })).toBe(true);
  });

  it("an event type added later still validates; consumers skip it", () => {
    expect(validate({ type: "tool.progress", seq: 3, time: tool.time, session_id: null, output: "Hel" })).toBe(true);
  });

  it("what would break a consumer does not validate: a missing or retyped field, an unknown class", () => {
    const { call_id: _, ...withoutCallId } = tool;
    expect(validate(withoutCallId)).toBe(false);
    expect(validate({ ...tool, status: 7 })).toBe(false);
    expect(validate({ ...result, class: "partial_success" })).toBe(false);
    // A known event type keeps its shape: it cannot pass as a future event.
    expect(validate({ type: "tool", seq: 1, time: tool.time, session_id: null })).toBe(false);
  });

  it("oc-exec's own output cannot drift: its zod schema rejects any field it does not declare", () => {
    expect(EventSchema.safeParse(tool).success).toBe(true);
    expect(EventSchema.safeParse({ ...tool, added_in_a_later_minor: 1 }).success).toBe(false);
  });

  it("the README states the policy; docs/events.md (where the README points) lists every warning code", () => {
    expect(readme).toContain("## Schema compatibility");
    const events = readFileSync(new URL("../../docs/events.md", import.meta.url), "utf8");
    const listed = events.slice(events.indexOf("## Warning codes"));
    for (const code of Object.keys(WARNING_CODES)) expect(listed).toContain(`\`${code}\``);
  });
});
