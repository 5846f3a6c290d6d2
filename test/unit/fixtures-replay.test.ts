// Every recorded opencode version, every scenario, through the pure core. The expectations are
// written here by hand, per scenario, and hold for every version: that is oc-exec's promise.
import { describe, expect, it } from "vitest";
import { EventSchema } from "../../src/contract/schema.js";
import { fixtureVersions, loadFixture } from "../support/fixtures.js";
import { replayStreams } from "../support/replay.js";

type Check = (r: ReturnType<typeof replayStreams>) => void;
type Expect = { class: string; message?: RegExp; types?: string[]; check?: Check; before?: Record<string, Check> };

// 1.0 has no --auto: it draws an interactive permission prompt and names neither the permission
// key nor the tool call; what it shows is all there is to report.
const OLD_PROMPT = "1.0.185";
// Shaped from 2.x's source, not recorded (meta.json says "shaped": true): its call ids, error
// shapes and retry flags differ, the class and exit code may not.
const V2 = "2.0.14";

const EXPECTED: Record<string, Expect> = {
  plain: {
    class: "success",
    types: ["session.started", "step.started", "message", "step.finished", "result"],
    check: (r) => expect(r.result.text).toBe("Hello from the scripted model."),
  },
  tool: {
    class: "success",
    types: [
      "session.started",
      "step.started",
      "tool",
      "step.finished",
      "step.started",
      "message",
      "step.finished",
      "result",
    ],
    check: (r) => {
      expect(r.result.usage).toMatchObject({ input: 350, output: 26, total: 376 });
      expect(r.events.find((e) => e.type === "tool")).toMatchObject({
        tool: "bash",
        status: "completed",
        output: "hi\n",
      });
    },
    before: {
      [V2]: (r) => {
        expect(r.result.usage).toMatchObject({ input: 350, output: 26, total: 376 });
        // The call id is part.id when the part id is part.partID; the timing is part.time.
        expect(r.events.find((e) => e.type === "tool")).toMatchObject({
          call_id: "call_function_1",
          tool: "bash",
          status: "completed",
          output: "hi\n",
          duration_ms: 40,
        });
      },
    },
  },
  write: {
    class: "success",
    check: (r) => expect(r.result.files_changed).toEqual([{ path: "notes.txt", change: "added" }]),
  },
  "permission-ask": {
    class: "approval_denied",
    before: {
      [OLD_PROMPT]: (r) =>
        expect(r.result.permission_denials).toEqual([
          { permission: null, pattern: "echo hi", tool: null, call_id: null },
        ]),
      [V2]: (r) => {
        expect(r.result.permission_denials).toEqual([
          { permission: "bash", pattern: "echo hi", tool: "bash", call_id: "call_function_1" },
        ]);
        expect(r.events.find((e) => e.type === "tool")).toMatchObject({ status: "denied" });
        expect(r.result.tools).toEqual({ total: 1, failed: 0, denied: 1 });
      },
    },
    message: /^opencode needed (permission bash|a permission) \(echo hi\), and nobody can approve it/,
    check: (r) => {
      expect(r.result.permission_denials).toEqual([
        { permission: "bash", pattern: "echo hi", tool: "bash", call_id: "call_1_0" },
      ]);
      expect(r.events.find((e) => e.type === "tool")).toMatchObject({ status: "denied" });
    },
  },
  "external-directory": {
    class: "approval_denied",
    before: {
      [OLD_PROMPT]: (r) =>
        expect(r.result.permission_denials).toEqual([
          { permission: "external_directory", pattern: "/etc/hostname", tool: null, call_id: null },
        ]),
    },
    check: (r) =>
      expect(r.result.permission_denials).toEqual([
        { permission: "external_directory", pattern: "/etc/*", tool: "read", call_id: "call_1_0" },
      ]),
  },
  "api-401": {
    class: "api_error",
    message: /^Incorrect API key provided: sk-\[REDACTED\]$/,
    check: (r) => {
      expect(r.result.error).toMatchObject({ name: "APIError", status_code: 401, retryable: false });
      expect(JSON.stringify(r.events)).not.toContain("abcdefghijklmnop");
    },
    before: {
      [V2]: (r) => {
        expect(r.result.error).toMatchObject({ name: "provider.auth", status_code: 401, retryable: null });
        expect(JSON.stringify(r.events)).not.toContain("abcdefghijklmnop");
      },
    },
  },
  "api-429": {
    class: "api_error",
    message: /Rate limit reached/,
    check: (r) => expect(r.result.error).toMatchObject({ status_code: 429, retryable: true }),
    before: {
      [V2]: (r) => expect(r.result.error).toMatchObject({ name: "provider.rate-limit", status_code: 429 }),
    },
  },
  "api-quota": { class: "api_error", message: /credit balance is too low/ },
  "api-timeout": { class: "api_error", message: /^The request timed out\.$/ },
  "cut-off": {
    class: "agent_error",
    message:
      /^opencode's stream ended mid-step: step 2 started and never finished \(opencode exited with status 0, with no answer\)$/,
    check: (r) => expect(r.result.steps).toBe(2),
  },
  "text-after-finish": {
    class: "success",
    types: ["session.started", "step.started", "step.finished", "message", "result"],
    check: (r) => expect(r.result.text).toBe("Late but whole."),
  },
  "no-final-finish": {
    class: "success",
    types: ["session.started", "step.started", "message", "result"],
    check: (r) => expect(r.result.text).toBe("All done."),
  },
  "recovered-error": {
    class: "success",
    check: (r) => {
      expect(r.result.text).toBe("Answer after the retry.");
      expect(r.types).toEqual([
        "session.started",
        "step.started",
        "error",
        "step.started",
        "message",
        "step.finished",
        "warning",
        "result",
      ]);
      expect(r.events.find((e) => e.type === "warning")).toMatchObject({
        code: "recovered_error",
        message: expect.stringMatching(/^opencode reported provider\.rate-limit \(HTTP 429\): Rate limit reached/),
      });
    },
  },
  "error-then-stop": {
    class: "api_error",
    message: /^socket hang up$/,
    check: (r) => expect(r.result.error).toMatchObject({ name: "provider.transport", status_code: null }),
  },
  "untyped-error": {
    class: "agent_error",
    message: /^Unexpected server error$/,
    check: (r) => expect(r.result.error!.name).toBe("UnknownError"),
  },
  "api-500": {
    class: "api_error",
    message: /server had an error/,
    check: (r) => expect(r.result.error).toMatchObject({ status_code: 500, retryable: true }),
  },
  "connection-refused": {
    class: "api_error",
    message: /Unable to connect/,
    check: (r) => expect(r.result.error).toMatchObject({ status_code: null, retryable: true }),
  },
  "context-overflow": { class: "context_overflow", message: /maximum context length/ },
  length: { class: "agent_error", message: /reason "length"/ },
  "unknown-model": {
    class: "config_error",
    message: /^Model not found: fake\/nope\. \(opencode offers a provider's models only when its credentials are set/,
    check: (r) => expect(r.result.error!.name).toBe("ProviderModelNotFoundError"),
  },
  "missing-credentials": {
    class: "config_error",
    message: /^Model not found: anthropic\/claude-sonnet-4-5\..*credentials are set/,
  },
  "invalid-config": {
    class: "config_error",
    message:
      /Configuration is invalid at OPENCODE_CONFIG_CONTENT\n.*Expected object|^opencode refused to start: no providers found/,
  },
  "malformed-project-config": { class: "config_error", message: /opencode\.json is not valid JSON/ },
  "session-not-found": { class: "config_error", message: /Session not found|Resource not found: .*ses_doesnotexist/ },
  "agent-fallback": {
    class: "success",
    check: (r) =>
      expect(r.events.find((e) => e.type === "warning")).toMatchObject({
        code: "agent_fallback",
        // opencode's "!" marker is not part of the message.
        message: expect.stringMatching(/^agent "nosuchagent" not found/),
      }),
  },
};

for (const version of fixtureVersions()) {
  describe(`opencode ${version} fixtures`, () => {
    for (const [scenario, want] of Object.entries(EXPECTED)) {
      const fixture = loadFixture(version, scenario);
      it.skipIf(!fixture)(`${scenario} -> ${want.class}`, () => {
        const r = replayStreams(fixture!.stdout, fixture!.stderr, {
          exitCode: fixture!.meta.exit_code,
          signal: fixture!.meta.signal,
        });
        for (const e of r.events) expect(EventSchema.safeParse(e).success).toBe(true);
        expect(r.result.class).toBe(want.class);
        if (want.message) expect(r.result.error?.message).toMatch(want.message);
        if (want.types) expect(r.types).toEqual(want.types);
        (want.before?.[version] ?? want.check)?.(r);
        // Order of arrival on the two pipes must not matter.
        const late = replayStreams(
          fixture!.stdout,
          fixture!.stderr,
          { exitCode: fixture!.meta.exit_code },
          { stderrFirst: false },
        );
        expect(late.result.class).toBe(want.class);
        expect(late.result.permission_denials).toEqual(r.result.permission_denials);
      });
    }
  });
}
