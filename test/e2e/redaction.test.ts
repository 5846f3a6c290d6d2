// No secret leaves in what oc-exec writes, sandbox or not: the values of the environment's secret
// variables (random values, no known shape, so the by-value rule is what is tested) are [REDACTED]
// in events, stderr, the -o file and the raw recording, also when a secret is split across
// message.delta pieces on a server.
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { readRecords, useWarmServer } from "../support/warm-server.js";

const e2e = useE2E();
const server = useWarmServer(e2e);
const secret = (n = 12) => randomBytes(n).toString("hex");

describe("secrets out of everything oc-exec writes", () => {
  it("opencode run: a secret variable and a --redact-env one, echoed by the model, are [REDACTED] in events, stderr and -o", async () => {
    const token = secret();
    const named = secret();
    const dir = e2e.workspace();
    const answer = join(dir, "answer.md");
    const run = await e2e.run(
      ["--verbose", "--redact-env", "MY_THING", "-o", answer, `scenario:echo ${token} and ${named}`],
      {
        cwd: dir,
        extraEnv: { MY_API_TOKEN: token, MY_THING: named },
      },
    );
    expect(run.code).toBe(0);
    expect(run.result.text).toBe("you said: scenario:echo [REDACTED] and [REDACTED]");
    expect(readFileSync(answer, "utf8")).toBe("you said: scenario:echo [REDACTED] and [REDACTED]");
    for (const value of [token, named]) {
      expect(run.stdout).not.toContain(value);
      expect(run.stderr).not.toContain(value);
    }
  }, 60_000);

  it("KEY settings that are words (LOOKUP_KEY=username) leave ordinary text alone; a random key beside them is still [REDACTED]", async () => {
    const key = secret();
    const dir = e2e.workspace();
    const answer = join(dir, "answer.md");
    const prompt = `scenario:echo add a username column and index customer_id, key ${key}`;
    const run = await e2e.run(["-o", answer, prompt], {
      cwd: dir,
      extraEnv: { LOOKUP_KEY: "username", PRIMARY_KEY_COLUMN: "customer_id", MY_API_KEY: key },
    });
    expect(run.code).toBe(0);
    const want = "you said: scenario:echo add a username column and index customer_id, key [REDACTED]";
    expect(run.result.text).toBe(want);
    expect(readFileSync(answer, "utf8")).toBe(want);
    expect(run.stdout).not.toContain(key);
  }, 60_000);

  it("on a server oc-exec started, a tool that prints the server's password shows [REDACTED]; under GitHub Actions, server start masks it", async () => {
    const password = server.record.password;
    const dir = e2e.workspace();
    const run = await e2e.run(["--attach", server.url, "--auto", "scenario:escape"], { cwd: dir });
    // The unsandboxed escape's one write outside the throwaway HOME.
    rmSync(`/tmp/oc-exec-escape-${basename(dirname(dir))}-${basename(dir)}.txt`, { force: true });
    expect(run.code).toBe(0);
    const tool = run.events.find((e) => e.type === "tool");
    expect(tool?.type === "tool" && tool.output).toContain("server password is [REDACTED]");
    expect(run.stdout).not.toContain(password);
    const started = await e2e.runRaw(["server", "start", "--idle-timeout", "30s"], {
      extraEnv: { GITHUB_ACTIONS: "true" },
    });
    try {
      expect(started.code).toBe(0);
      const record = readRecords(e2e.home.env.XDG_STATE_HOME!).find((r) => r.url === started.stdout.trim());
      expect(started.stderr.split("\n")).toContain(`::add-mask::${record?.password}`);
      expect(started.stdout).toBe(`${record?.url}\n`);
    } finally {
      await e2e.runRaw(["server", "stop", started.stdout.trim()]);
    }
  }, 90_000);

  it("a server with --text-deltas: a secret split across two message.delta events never shows; the recording is redacted too", async () => {
    // The scripted model writes its text in two halves: a 32-character secret straddles the cut.
    const token = secret(16);
    const dir = e2e.workspace();
    const recording = join(dir, "events.raw.jsonl");
    const run = await e2e.run(["--attach", server.url, "--text-deltas", `scenario:echo ${token}`], {
      cwd: dir,
      extraEnv: { DEPLOY_TOKEN: token, OC_EXEC_RECORD_EVENTS: recording },
    });
    expect(run.code).toBe(0);
    const deltas = run.events.flatMap((e) => (e.type === "message.delta" ? [e.text] : []));
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    const message = run.events.find((e) => e.type === "message");
    expect(message?.type === "message" && message.text).toBe("you said: scenario:echo [REDACTED]");
    expect(deltas.join("")).toBe("you said: scenario:echo [REDACTED]");
    expect(run.stdout).not.toContain(token);
    expect(run.stdout).not.toContain(token.slice(0, 12));
    const raw = readFileSync(recording, "utf8");
    expect(raw).toContain("[REDACTED]");
    expect(raw).not.toContain(token);
  }, 60_000);
});
