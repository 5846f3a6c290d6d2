// The features exec users expect, each against the real opencode and the scripted model server.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundledBinary } from "../../src/domain/opencode/locate.js";
import { useE2E } from "../support/e2e.js";
import { FAKE_OPENCODE } from "../support/fixtures.js";
import { eventsOf } from "../support/run-cli.js";

const e2e = useE2E();

function sessionIds(): string[] {
  const out = execFileSync(bundledBinary()!.path, ["session", "list", "--format", "json"], {
    env: e2e.opencodeEnv(),
    cwd: e2e.home.workspace,
    encoding: "utf8",
  });
  return out.trim() === "" ? [] : (JSON.parse(out) as { id: string }[]).map((s) => s.id);
}

describe("sessions", () => {
  it("--session resumes a session: the prompt is sent, resumed is true, the model sees the history", async () => {
    const first = await e2e.run(["-q", "scenario:echo first question"]);
    const id = first.result.session_id!;
    const second = await e2e.run(["-q", "--session", id, "scenario:echo second question"]);
    expect(second.code).toBe(0);
    expect(eventsOf(second, "run.started")[0]!.resume).toBe(id);
    expect(eventsOf(second, "session.started")[0]).toMatchObject({ session_id: id, resumed: true });
    const last = e2e.server.requests.at(-1)!.body.messages.filter((m) => m.role === "user");
    expect(last.length).toBe(2);
  });

  it("--continue and `resume --last` resume the most recent session; --fork forks it", async () => {
    const first = await e2e.run(["-q", "scenario:plain hello"]);
    const id = first.result.session_id!;
    const cont = await e2e.run(["-q", "--continue", "scenario:plain again"]);
    expect(eventsOf(cont, "session.started")[0]).toMatchObject({ session_id: id, resumed: true });
    const alias = await e2e.run(["resume", "--last", "-q", "scenario:plain and again"]);
    expect(eventsOf(alias, "session.started")[0]).toMatchObject({ session_id: id, resumed: true });
    const forked = await e2e.run(["-q", "--session", id, "--fork", "scenario:plain forked"]);
    expect(forked.code).toBe(0);
    expect(forked.result.session_id).not.toBe(id);
    expect(eventsOf(forked, "session.started")[0]!.resumed).toBe(false);
  });

  it("--ephemeral deletes the session after the turn, also when the turn fails", async () => {
    const ok = await e2e.run(["--ephemeral", "scenario:plain bye"]);
    expect(ok.code).toBe(0);
    expect(ok.result.session_deleted).toBe(true);
    // The summary offers no resume command for a session that no longer exists.
    expect(ok.stderr).toContain("✔ success (exit 0)");
    expect(ok.stderr).not.toContain("resume:");
    const failed = await e2e.run(["-q", "--ephemeral", "scenario:http-401"]);
    expect(failed.code).toBe(4);
    expect(failed.result.session_deleted).toBe(true);
    const remaining = sessionIds();
    expect(remaining).not.toContain(ok.result.session_id);
    expect(remaining).not.toContain(failed.result.session_id);
  });
});

describe("permission policy", () => {
  const ask = { OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) };

  it("--allow replaces an inherited OPENCODE_PERMISSION: the ask is gone and bash runs", async () => {
    const run = await e2e.run(["-q", "--allow", "bash,read", "scenario:tool run echo"], { extraEnv: ask });
    expect(run.code).toBe(0);
    expect(eventsOf(run, "tool")[0]).toMatchObject({ tool: "bash", status: "completed" });
  });

  it("--auto approves what the config only asks for", async () => {
    const run = await e2e.run(["-q", "--auto", "scenario:tool run echo"], { extraEnv: ask });
    expect(run.code).toBe(0);
    expect(eventsOf(run, "tool")[0]!.status).toBe("completed");
  });

  it("the default stays safe: nothing is auto-approved", async () => {
    const run = await e2e.run(["-q", "scenario:tool run echo"], { extraEnv: ask });
    expect(run.code).toBe(2);
  });

  it("the policy reaches opencode exactly; unknown keys pass with a warning; a key in both lists is a config_error", async () => {
    const record = join(e2e.home.root, "record-policy.json");
    const run = await e2e.run(["-q", "--allow", "read,grep", "--deny", "grep,frobnicate", "x"], {
      extraEnv: { ...ask, OC_EXEC_OPENCODE: FAKE_OPENCODE, FAKE_OPENCODE_RECORD: record },
    });
    expect(run.code).toBe(5);
    expect(run.result.error!.message).toBe("grep is in both --allow and --deny");
    const run2 = await e2e.run(["-q", "--allow", "read", "--deny", "frobnicate", "x"], {
      extraEnv: { ...ask, OC_EXEC_OPENCODE: FAKE_OPENCODE, FAKE_OPENCODE_RECORD: record },
    });
    expect(run2.code).toBe(0);
    expect(eventsOf(run2, "warning").map((w) => w.code)).toEqual(["unknown_permission"]);
    const seen = JSON.parse(readFileSync(record, "utf8")) as { env: Record<string, string> };
    const policy = JSON.parse(seen.env.OPENCODE_PERMISSION!) as Record<string, string>;
    expect(policy.read).toBe("allow");
    expect(policy.frobnicate).toBe("deny");
    expect(policy.bash).toBe("deny");
    expect(Object.values(policy).filter((v) => v === "allow")).toEqual(["allow"]);
  });
});

describe("--agent", () => {
  it("a mistyped agent is exit 5 before anything runs (opencode fell back to its default agent); a known one, the workspace's too, runs", async () => {
    const dir = e2e.workspace();
    mkdirSync(join(dir, ".opencode", "agent"), { recursive: true });
    writeFileSync(
      join(dir, ".opencode", "agent", "reviewer.md"),
      "---\ndescription: reviews\nmode: subagent\n---\nReview.\n",
    );
    const typo = await e2e.run(["-q", "--agent", "paln", "scenario:plain agent-typo"], { cwd: dir });
    expect(typo.code).toBe(5);
    expect(typo.result.class).toBe("config_error");
    expect(typo.result.error).toMatchObject({ name: "UnknownAgent" });
    expect(typo.result.error!.message).toMatch(
      /^--agent paln: opencode knows no such agent here \(it knows build, .*plan.*reviewer.*\); it would have run the default agent instead; nothing was run$/,
    );
    expect(e2e.requestsFor("agent-typo")).toEqual([]);
    for (const agent of ["plan", "reviewer"]) {
      const run = await e2e.run(["-q", "--agent", agent, `scenario:plain agent-${agent}`], { cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      expect(eventsOf(run, "warning").filter((w) => w.code === "agent_fallback")).toEqual([]);
    }
  });
});

describe("output", () => {
  it("-o writes the final message atomically, on success and on failure", async () => {
    const file = join(e2e.home.root, "last.txt");
    const ok = await e2e.run(["-q", "-o", file, "scenario:plain hi"]);
    expect(readFileSync(file, "utf8")).toBe("Hello from the scripted model.");
    expect(ok.result.text).toBe("Hello from the scripted model.");
    const cut = await e2e.run(["-q", "-o", file, "scenario:length"]);
    expect(cut.code).toBe(1);
    expect(readFileSync(file, "utf8")).toBe("This answer was cut");
  });

  it("--output-schema: the model is told, the JSON is extracted and validated into structured_output", async () => {
    const schemaFile = join(e2e.home.root, "answer.schema.json");
    writeFileSync(
      schemaFile,
      JSON.stringify({
        type: "object",
        required: ["answer"],
        properties: { answer: { type: "number" }, files: { type: "array", items: { type: "string" } } },
      }),
    );
    const ok = await e2e.run(["-q", "--output-schema", schemaFile, "scenario:json what is it"]);
    expect(ok.code).toBe(0);
    expect(ok.result.structured_output).toEqual({ answer: 42, files: ["a.ts"] });
    expect(e2e.requestsFor("scenario:json what is it").at(-1)!.userText).toContain('"required": [\n    "answer"\n  ]');
    const bad = await e2e.run(["-q", "--output-schema", schemaFile, "scenario:json-bad what is it"]);
    expect(bad.code).toBe(1);
    expect(bad.result.error).toMatchObject({
      name: "StructuredOutputError",
      message: "the final message does not match --output-schema: /answer must be number",
    });
    expect(bad.result.structured_output).toBeUndefined();
  });

  it("--include-raw attaches the opencode line to each event derived from it", async () => {
    const run = await e2e.run(["-q", "--include-raw", "scenario:plain hi"]);
    expect(run.events[0]!.raw).toBeUndefined();
    const message = eventsOf(run, "message")[0]!;
    expect(JSON.parse(message.raw!)).toMatchObject({ type: "text", part: { text: "Hello from the scripted model." } });
    expect(run.result.raw).toBeUndefined();
  });

  it("--max-output-bytes caps tool output and says so", async () => {
    const run = await e2e.run(["-q", "--max-output-bytes", "2", "scenario:tool run echo"]);
    expect(eventsOf(run, "tool")[0]).toMatchObject({ output: "hi", output_truncated: true });
  });
});

describe("configuration and model", () => {
  it("--config is deep-merged with the inherited OPENCODE_CONFIG_CONTENT (the provider stays, the permission applies)", async () => {
    const file = join(e2e.home.root, "extra.json");
    writeFileSync(file, JSON.stringify({ permission: { bash: "ask" } }));
    const run = await e2e.run(["-q", "--config", file, "scenario:tool run echo"]);
    expect(run.code).toBe(2);
    expect(run.result.permission_denials[0]).toMatchObject({ permission: "bash" });
  });

  it("--mcp adds a local MCP server to the merged config, without touching the workspace", async () => {
    const record = join(e2e.home.root, "record-mcp.json");
    const ws = e2e.workspace();
    await e2e.run(["-q", "--dir", ws, "--mcp", 'files=npx -y "@scope/server fs" /tmp', "x"], {
      extraEnv: { OC_EXEC_OPENCODE: FAKE_OPENCODE, FAKE_OPENCODE_RECORD: record },
    });
    const seen = JSON.parse(readFileSync(record, "utf8")) as { env: Record<string, string> };
    const config = JSON.parse(seen.env.OPENCODE_CONFIG_CONTENT!) as { provider: object; mcp: object };
    expect(config.provider).toHaveProperty("fake");
    expect(config.mcp).toEqual({
      files: { type: "local", command: ["npx", "-y", "@scope/server fs", "/tmp"], enabled: true },
    });
    expect(existsSync(join(ws, "opencode.json"))).toBe(false);
  });

  it("an --mcp server that does not start: a warning naming it (opencode said so only in its log); --fail-on mcp-unavailable fails the turn", async () => {
    const broken = ["--mcp", "broken=/nonexistent/mcp-server --stdio"];
    const run = await e2e.run(["-q", ...broken, "scenario:plain mcp-broken"]);
    expect(run.code).toBe(0);
    expect(eventsOf(run, "warning").filter((w) => w.code === "mcp_unavailable")).toEqual([
      expect.objectContaining({
        message:
          "MCP server broken did not start (failed): the turn ran without its tools (--fail-on mcp-unavailable makes this a failure)",
      }),
    ]);
    const failed = await e2e.run(["-q", ...broken, "--fail-on", "mcp-unavailable", "scenario:plain mcp-broken-fail"]);
    expect(failed.code).toBe(1);
    expect(failed.result).toMatchObject({
      class: "agent_error",
      error: { name: "FailOnCondition", message: "--fail-on mcp-unavailable: MCP server broken did not start" },
    });
    // No MCP server that failed: nothing said, nothing failed.
    const fine = await e2e.run(["-q", "--fail-on", "mcp-unavailable", "scenario:plain mcp-none"]);
    expect(fine.code).toBe(0);
    expect(eventsOf(fine, "warning").filter((w) => w.code === "mcp_unavailable")).toEqual([]);
  });

  it("the model comes from opencode's own log, per step, with no second opencode process", async () => {
    // A wrapper on the real binary notes every opencode process oc-exec starts.
    const dir = mkdtempSync(join(e2e.home.root, "wrap-"));
    const calls = join(dir, "calls.txt");
    const wrapper = join(dir, "opencode");
    writeFileSync(wrapper, `#!/bin/sh\necho "$1" >> "${calls}"\nexec "${bundledBinary()!.path}" "$@"\n`);
    chmodSync(wrapper, 0o755);
    const run = await e2e.run(["-q", "--opencode", wrapper, "scenario:tool run echo"], {
      extraEnv: { OC_EXEC_EXPORT: "1" },
    });
    expect(run.code).toBe(0);
    expect(run.result.model).toBe("fake/fake-model");
    expect(eventsOf(run, "step.finished").map((s) => s.model)).toEqual(["fake/fake-model", "fake/fake-model"]);
    expect(
      readFileSync(calls, "utf8")
        .split("\n")
        .filter((c) => c === "run" || c === "export"),
    ).toEqual(["run"]);
  });

  it("a release that names no model gets it from opencode export; --no-export skips it; a failing export is only a warning", async () => {
    const fake = { OC_EXEC_EXPORT: "1", OC_EXEC_OPENCODE: FAKE_OPENCODE, FAKE_OPENCODE_MODE: "ok" };
    const failing = await e2e.run(["-q", "x"], { extraEnv: fake });
    expect(failing.code).toBe(0);
    expect(failing.result.model).toBeNull();
    expect(eventsOf(failing, "warning")).toMatchObject([
      { code: "export_failed", message: expect.stringContaining("Session not found") },
    ]);
    const skipped = await e2e.run(["-q", "--no-export", "x"], { extraEnv: fake });
    expect(skipped.code).toBe(0);
    expect(eventsOf(skipped, "warning")).toEqual([]);
    const named = await e2e.run(["-q", "-m", "fake/fake-model", "x"], { extraEnv: fake });
    expect(named.result.model).toBe("fake/fake-model");
    expect(eventsOf(named, "warning")).toEqual([]);
  });
});

describe("library API", () => {
  it("runTurn yields typed events ending in the result; the CLI and the library agree", async () => {
    const { runTurn } = await import("../../dist/index.js");
    const types: string[] = [];
    let last: { type: string; class?: string; text?: string | null } | null = null;
    for await (const event of runTurn({ prompt: "scenario:plain hi", dir: e2e.home.workspace, env: e2e.home.env })) {
      types.push(event.type);
      last = event;
    }
    expect(types).toEqual(["run.started", "session.started", "step.started", "message", "step.finished", "result"]);
    expect(last).toMatchObject({ type: "result", class: "success", text: "Hello from the scripted model." });
  });

  it("a Session's second turn resumes the session its first turn ran in; options are split by lifetime", async () => {
    const { OcExec } = await import("../../dist/index.js");
    const oc = new OcExec({ env: e2e.home.env });
    const session = oc.session({ dir: e2e.home.workspace });
    expect(session.id).toBeNull();
    const firstTurn: { type: string; resumed?: boolean; session_id: string | null }[] = [];
    for await (const event of session.run("scenario:plain first", { maxSteps: 5 })) firstTurn.push(event);
    const id = firstTurn.at(-1)!.session_id;
    expect(id).toMatch(/^ses_/);
    expect(session.id).toBe(id);
    const second: { type: string; resumed?: boolean; session_id: string | null; class?: string }[] = [];
    for await (const event of session.run("scenario:plain second")) second.push(event);
    expect(second.find((e) => e.type === "session.started")).toMatchObject({ resumed: true, session_id: id });
    expect(second.at(-1)).toMatchObject({ type: "result", class: "success", session_id: id });
    // Invalid options end in a config_error result, like any other problem.
    const bad: { type: string; class?: string }[] = [];
    for await (const event of oc.runTurn("x", { maxSteps: -1 })) bad.push(event);
    expect(bad.map((e) => e.type)).toEqual(["run.started", "result"]);
    expect(bad.at(-1)).toMatchObject({ class: "config_error" });
  });
});
