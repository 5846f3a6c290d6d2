// --rehearse: every scenario gives its documented class and exit code, with the real opencode and
// the built-in scripted model, touching nothing of the caller's.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EXIT_CODES } from "../../src/contract/exit-codes.js";
import { startScriptedModel } from "../../src/domain/scripted/public.js";
import { REHEARSALS } from "../../src/domain/scripted/rehearsals.js";
import { eventsOf, runCli, runCliRaw } from "../support/run-cli.js";

// A caller with no provider configured and an empty workspace: the rehearsal needs neither.
const home = mkdtempSync(join(tmpdir(), "oc-exec-caller-"));
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, "config") };

describe("--rehearse", () => {
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const names = Object.keys(REHEARSALS) as (keyof typeof REHEARSALS)[];
  it.each(names)("%s", async (name) => {
    const want = REHEARSALS[name];
    const run = await runCli(["-q", "--rehearse", name], { env, cwd: home });
    expect(run.result.class).toBe(want.expect);
    expect(run.code).toBe(EXIT_CODES[want.expect]);
    expect(run.events[1]).toMatchObject({ type: "warning", code: "rehearsal" });
    if (want.expect === "success") expect(run.result.model).toBe("rehearsal/scripted");
    // The caller's directory and HOME are untouched; the throwaway HOME is gone.
    expect(readdirSync(home)).toEqual([]);
    expect(run.events[0]).toMatchObject({ type: "run.started" });
    const cwd = (run.events[0] as { cwd: string }).cwd;
    expect(cwd).not.toBe(home);
    expect(existsSync(cwd)).toBe(false);
  });

  it.each([
    ["overloaded", ["--retry", "1", "--retry-delay", "0"], { attempts: 2 }],
    ["stall-once", ["--retry", "1", "--retry-delay", "0"], { attempts: 2 }],
    ["verify-fix", ["--verify", "test -f fixed.txt"], { verification: { passed: true, rounds: 2 } }],
  ] as const)("%s with %j: success, as the table says", async (name, flags, fields) => {
    const run = await runCli(["-q", "--rehearse", name, ...flags], { env, cwd: home });
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ class: "success", ...fields });
    expect(readdirSync(home)).toEqual([]);
  });

  it("OC_EXEC_REHEARSE does the same; an unknown scenario is a usage error naming them", async () => {
    const viaEnv = await runCli(["-q", "hi"], { env: { ...env, OC_EXEC_REHEARSE: "denied" }, cwd: home });
    expect(viaEnv.code).toBe(2);
    expect(eventsOf(viaEnv, "permission.denied")).toHaveLength(1);
    const bad = await runCli(["-q", "--rehearse", "flaky"], { env, cwd: home });
    expect(bad.code).toBe(5);
    expect(bad.result.error!.message).toBe(
      `--rehearse takes one of ${Object.keys(REHEARSALS).join(", ")}, not "flaky"`,
    );
  });
});

// A rehearsal never reaches a real model: what cannot be rehearsed offline is refused before
// anything runs. Each "real" endpoint here counts what reaches it: a configured model (the scripted
// server as the caller's own provider), a server named by --attach, an ssh on PATH.
describe("--rehearse with --acp: the agent against a scripted server of its own provider's API", () => {
  // The caller's PATH finds the agents (the project's pinned dev dependencies); nothing else of the
  // caller's is used: no key, no provider, no settings. A caller's HOME of this block's own.
  const home = mkdtempSync(join(tmpdir(), "oc-exec-caller-acp-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const withAgents = {
    PATH: `${join(process.cwd(), "node_modules", ".bin")}:${env.PATH}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, "config"),
  };

  it.each([
    ["gemini", "tool", 0, "success"],
    ["qwen", "api-401", 4, "api_error"],
    ["claude", "context-overflow", 3, "context_overflow"],
  ] as const)(
    "--acp %s --rehearse %s: exit %i (%s), the agent named in the warning",
    async (agent, name, code, klass) => {
      const run = await runCli(["-q", "--rehearse", name, "--acp", agent, "Go"], { env: withAgents, cwd: home });
      expect(run.code, run.stderr).toBe(code);
      expect(run.result.class).toBe(klass);
      expect(run.events[0]).toMatchObject({ type: "run.started", acp: { name: agent } });
      expect(run.events[1]).toMatchObject({
        type: "warning",
        code: "rehearsal",
        message: `a rehearsal (${name}): the real ${agent} against oc-exec's scripted model, in a throwaway HOME and workspace; nothing in this run is a real answer`,
      });
      if (klass === "success") expect(run.result.text).toBe("The command printed hi.");
      expect(readdirSync(home)).toEqual([]);
    },
    120_000,
  );

  it("an agent's own command line cannot be pointed at the scripted model: exit 5, nothing run", async () => {
    const run = await runCli(["-q", "--rehearse", "success", "--acp", "./my-agent --stdio", "Go"], {
      env: withAgents,
      cwd: home,
    });
    expect(run.code).toBe(5);
    expect(run.result.error?.message).toBe(
      "--rehearse cannot point ./my-agent --stdio at the scripted model: a rehearsal runs opencode or a built-in agent (opencode, gemini, qwen, claude, codex, copilot); nothing was run, nothing was sent to a model",
    );
  });
});

describe("OC_EXEC_REHEARSE on what cannot be rehearsed: refused, nothing reaches the real model", () => {
  const roots: string[] = [];
  afterAll(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });
  const caller = () => {
    const root = mkdtempSync(join(tmpdir(), "oc-exec-rehearse-refused-"));
    roots.push(root);
    const ws = join(root, "ws");
    mkdirSync(ws);
    return {
      root,
      ws,
      env: { ...env, HOME: root, XDG_CONFIG_HOME: join(root, "config"), XDG_STATE_HOME: join(root, "state") },
    };
  };

  it("a batch: exit 5 and a batch.result saying why; the configured model gets no request", async () => {
    const model = await startScriptedModel();
    try {
      const { ws, env: callerEnv } = caller();
      writeFileSync(join(ws, "tasks.jsonl"), '{"id":"t1","prompt":"scenario:plain real"}\n');
      const run = await runCliRaw(["batch", "tasks.jsonl", "-m", model.model], {
        env: { ...callerEnv, OPENCODE_CONFIG_CONTENT: model.opencodeConfig, OC_EXEC_REHEARSE: "success" },
        cwd: ws,
      });
      expect(run.code).toBe(5);
      expect(run.stderr).toContain("OC_EXEC_REHEARSE does not apply to oc-exec batch yet");
      const last = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
      expect(last).toMatchObject({ type: "batch.result", ok: false, exit_code: 5, tasks: [] });
      expect(last.problems).toEqual([expect.stringMatching(/^OC_EXEC_REHEARSE does not apply to oc-exec batch yet: /)]);
      expect(model.requests()).toEqual([]);
    } finally {
      await model.close();
    }
  });

  it("server start: exit 5, no server left running", async () => {
    const { ws, env: callerEnv } = caller();
    const started = await runCliRaw(["server", "start"], {
      env: { ...callerEnv, OC_EXEC_REHEARSE: "success" },
      cwd: ws,
    });
    expect(started.code).toBe(5);
    expect(started.stderr).toContain("OC_EXEC_REHEARSE does not apply to oc-exec server start yet");
    const listed = await runCliRaw(["server", "list"], { env: callerEnv, cwd: ws });
    expect(listed.stdout).toBe("");
  });

  it("--attach: exit 5 naming --attach; the server gets no request", async () => {
    let reached = 0;
    const server = createServer((_req, res) => {
      reached++;
      res.writeHead(404).end();
    });
    server.keepAliveTimeout = 1;
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { ws, env: callerEnv } = caller();
      const run = await runCli(["-q", "--rehearse", "success", "--attach", url, "hi"], { env: callerEnv, cwd: ws });
      expect(run.code).toBe(5);
      expect(run.result).toMatchObject({ class: "config_error" });
      expect(run.result.error!.message).toMatch(/^--rehearse does not apply to a server named by --attach: /);
      expect(reached).toBe(0);
    } finally {
      server.close();
    }
  });

  it("--ssh: exit 5 naming --ssh; ssh is never run", async () => {
    const { root, ws, env: callerEnv } = caller();
    const bin = join(root, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "ssh"), `#!/bin/sh\ntouch "${root}/ssh-ran"\nexit 255\n`);
    chmodSync(join(bin, "ssh"), 0o755);
    const run = await runCli(["-q", "--ssh", "build-host", "hi"], {
      env: { ...callerEnv, PATH: `${bin}:${callerEnv.PATH}`, OC_EXEC_REHEARSE: "success" },
      cwd: ws,
    });
    expect(run.code).toBe(5);
    expect(run.result.error!.message).toMatch(/^--rehearse does not apply to an --ssh host: /);
    expect(existsSync(join(root, "ssh-ran"))).toBe(false);
  });
});
