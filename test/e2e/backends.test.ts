// The scenario table on both backends: every class the `run` path proves end to end, run once
// through `opencode run` and once on a real `opencode serve` (started by `oc-exec server start` in
// this file's throwaway HOME), asserting the same class, exit code and event types. Where the two
// differ, the row says so and why.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { eventsOf } from "../support/run-cli.js";
import { useWarmServer } from "../support/warm-server.js";

const e2e = useE2E();
const server = useWarmServer(e2e);

type Backend = "run" | "server";
type Row = {
  name: string;
  args: string[];
  env?: Record<string, string>;
  code: number;
  cls: string;
  /** The event types, the same on both backends unless `server` says otherwise. */
  types: string[];
  server?: { types: string[]; why: string };
  /** Another exact sequence a real race allows, and the race. */
  race?: { types: string[]; why: string };
  errorName?: string | { run: string; server: string };
};

const ONE_STEP = ["run.started", "session.started", "step.started", "message", "step.finished", "result"];
const TOOL_STEPS = [
  "run.started",
  "session.started",
  "step.started",
  "tool",
  "step.finished",
  "step.started",
  "message",
  "step.finished",
  "result",
];
const DENIED = [
  "run.started",
  "session.started",
  "step.started",
  "tool",
  "permission.denied",
  "step.finished",
  "result",
];

const ROWS: Row[] = [
  { name: "success", args: ["scenario:plain hi"], code: 0, cls: "success", types: ONE_STEP },
  { name: "tool", args: ["scenario:tool run echo"], code: 0, cls: "success", types: TOOL_STEPS },
  {
    name: "write",
    args: ["scenario:write a note"],
    code: 0,
    cls: "success",
    types: [...TOOL_STEPS.slice(0, 4), "file.changed", ...TOOL_STEPS.slice(4)],
  },
  {
    name: "approval denied (bash: ask)",
    args: ["scenario:tool run echo"],
    env: { OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) },
    code: 2,
    cls: "approval_denied",
    types: DENIED,
    errorName: "PermissionDenied",
  },
  {
    name: "approval denied (external_directory)",
    args: ["scenario:read-outside read it"],
    code: 2,
    cls: "approval_denied",
    types: DENIED,
  },
  {
    name: "api error 401",
    args: ["scenario:http-401"],
    code: 4,
    cls: "api_error",
    types: ["run.started", "session.started", "error", "result"],
    errorName: "APIError",
  },
  {
    name: "api error 429, after opencode's five retries",
    args: ["scenario:http-429"],
    code: 4,
    cls: "api_error",
    types: ["run.started", ...Array(5).fill("warning"), "session.started", "error", "result"],
    server: {
      types: ["run.started", "session.started", ...Array(5).fill("warning"), "error", "result"],
      why: "the run path learns of each retry from opencode's log, before the first JSON line names the session",
    },
    errorName: "APIError",
  },
  {
    name: "context overflow",
    args: ["scenario:context-overflow"],
    code: 3,
    cls: "context_overflow",
    types: ["run.started", "session.started", "error", "error", "result"],
  },
  {
    name: "length",
    args: ["scenario:length"],
    code: 1,
    cls: "agent_error",
    types: ONE_STEP,
    errorName: "OutputLengthError",
  },
  {
    name: "unknown model",
    args: ["-m", "fake/nope", "scenario:plain"],
    code: 5,
    cls: "config_error",
    types: ["run.started", "session.started", "error", "result"],
    server: {
      types: ["run.started", "session.started", "error", "error", "result"],
      why: "the server reports the missing model twice (session.error, then the thrown error)",
    },
    errorName: "ProviderModelNotFoundError",
  },
  {
    name: "missing credentials",
    args: ["-m", "anthropic/claude-sonnet-4-5", "scenario:plain"],
    env: { ANTHROPIC_API_KEY: "" },
    code: 5,
    cls: "config_error",
    types: ["run.started", "session.started", "error", "result"],
    server: {
      types: ["run.started", "session.started", "error", "error", "result"],
      why: "as for the unknown model",
    },
    errorName: "ProviderModelNotFoundError",
  },
  {
    name: "unknown session",
    args: ["-s", "ses_doesnotexist", "scenario:plain"],
    code: 5,
    cls: "config_error",
    types: ["run.started", "result"],
    errorName: { run: "OpencodeConfigError", server: "SessionNotFound" },
  },
  {
    name: "budget (--max-steps 1)",
    args: ["--max-steps", "1", "scenario:tool run echo"],
    code: 6,
    cls: "budget_exceeded",
    types: ["run.started", "session.started", "step.started", "warning", ...TOOL_STEPS.slice(3)],
    race: {
      types: ["run.started", "session.started", "step.started", "warning", ...TOOL_STEPS.slice(3, 6), "result"],
      why: "opencode writes step 2's start, text and finish within a millisecond; whether the text and finish are out before the stop lands is opencode's timing",
    },
    errorName: "BudgetExceeded",
  },
  {
    name: "timeout",
    args: ["--timeout", "2s", "--kill-after", "1s", "scenario:slow wait"],
    code: 124,
    cls: "timeout",
    types: ["run.started", "result"],
    errorName: "TimeoutError",
  },
  {
    name: "--output-schema, valid",
    args: ["--output-schema", "SCHEMA", "scenario:json what is it"],
    code: 0,
    cls: "success",
    types: ONE_STEP,
  },
  {
    name: "--output-schema, invalid",
    args: ["--output-schema", "SCHEMA", "scenario:json-bad what is it"],
    code: 1,
    cls: "agent_error",
    types: ONE_STEP,
    errorName: "StructuredOutputError",
  },
];

// Rows of the run path with no server twin, and why: an invalid OPENCODE_CONFIG_CONTENT (a server's
// configuration is fixed when it starts; --config/--mcp are refused with exit 5 instead, in
// server.test.ts), HTTP 500 and a refused provider connection (opencode retries them for over a
// minute; classify.test.ts replays them on the run path).

const schemaFile = () => {
  const file = join(e2e.home.root, "answer.schema.json");
  writeFileSync(
    file,
    JSON.stringify({ type: "object", properties: { answer: { type: "number" } }, required: ["answer"] }),
  );
  return file;
};

const backendArgs = (backend: Backend) => (backend === "server" ? ["--attach", server.url] : []);

describe.each(["run", "server"] as const)("the scenario table on the %s backend", (backend) => {
  it.each(ROWS.map((r) => [r.name, r] as const))("%s", async (_name, row) => {
    const args = row.args.map((a) => (a === "SCHEMA" ? schemaFile() : a));
    const run = await e2e.run(["-q", ...backendArgs(backend), ...args], { extraEnv: row.env });
    expect(run.code).toBe(row.code);
    expect(run.result.class).toBe(row.cls);
    expect(run.result.exit_code).toBe(row.code);
    const expected = backend === "server" && row.server ? row.server.types : row.types;
    if (row.race && run.types.length === row.race.types.length) expect(run.types).toEqual(row.race.types);
    else expect(run.types).toEqual(expected);
    if (row.errorName) {
      const name = typeof row.errorName === "string" ? row.errorName : row.errorName[backend];
      expect(run.result.error?.name).toBe(name);
    }
    const started = eventsOf(run, "run.started")[0]!;
    if (backend === "server") {
      expect(started.opencode).toEqual({ path: null, version: "1.18.33", url: server.url });
      expect(run.result.opencode).toEqual({ exit_code: null, signal: null });
    } else expect(started.opencode.url).toBeUndefined();
    if (row.cls === "success") {
      expect(eventsOf(run, "step.finished").map((s) => s.model)).toEqual(
        eventsOf(run, "step.finished").map(() => "fake/fake-model"),
      );
      expect(run.result.model).toBe("fake/fake-model");
    }
    if (row.name.startsWith("api error 429"))
      expect(eventsOf(run, "warning").map((w) => w.code)).toEqual(Array(5).fill("api_retry"));
    if (row.name === "--output-schema, valid")
      expect(run.result.structured_output).toEqual({ answer: 42, files: ["a.ts"] });
  });

  it("-o writes the final message; --ephemeral deletes the session", async () => {
    const out = join(e2e.home.root, `last-${backend}.txt`);
    const run = await e2e.run(["-q", ...backendArgs(backend), "-o", out, "--ephemeral", "scenario:plain bye"]);
    expect(run.code).toBe(0);
    expect(readFileSync(out, "utf8")).toBe("Hello from the scripted model.");
    expect(run.result.session_deleted).toBe(true);
    const again = await e2e.run(["-q", ...backendArgs(backend), "-s", run.result.session_id!, "scenario:plain again"]);
    expect(again.code).toBe(5);
    expect(again.result.class).toBe("config_error");
  });

  it("--session resumes: the model sees the first turn; --continue resumes the latest; --fork forks", async () => {
    const dir = e2e.workspace();
    const marker = `kiwi-${backend}`;
    const first = await e2e.run(["-q", ...backendArgs(backend), "--dir", dir, `scenario:echo remember ${marker}`]);
    expect(first.code).toBe(0);
    const id = first.result.session_id!;
    const resumed = await e2e.run(["-q", ...backendArgs(backend), "--dir", dir, "-s", id, "scenario:echo second"]);
    expect(resumed.code).toBe(0);
    expect(resumed.result.session_id).toBe(id);
    expect(eventsOf(resumed, "session.started")[0]!.resumed).toBe(true);
    const seen = e2e
      .requestsFor(marker)
      .at(-1)!
      .body.messages.filter((m) => m.role === "user");
    expect(seen.length).toBe(2);
    const latest = await e2e.run(["-q", ...backendArgs(backend), "--dir", dir, "-c", "scenario:echo third"]);
    expect(latest.result.session_id).toBe(id);
    const forked = await e2e.run([
      "-q",
      ...backendArgs(backend),
      "--dir",
      dir,
      "-s",
      id,
      "--fork",
      "scenario:echo fourth",
    ]);
    expect(forked.code).toBe(0);
    expect(forked.result.session_id).not.toBe(id);
    expect(eventsOf(forked, "session.started")[0]!.resumed).toBe(false);
  });
});
