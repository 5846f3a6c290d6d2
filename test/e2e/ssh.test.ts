// --ssh against a real SSH server on loopback (test/support/ssh-server.ts) with the system's
// OpenSSH client: the remote user has its own HOME, opencode configuration and workspace, and the
// same scripted model server. Every test asserts the exact events and exit code a local turn gives,
// and that nothing of the turn is left running for the remote user afterwards.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useE2E } from "../support/e2e.js";
import { FAKE_OPENCODE } from "../support/fixtures.js";
import { isAlive, waitFor } from "../support/procs.js";
import { BIN, cliOnPath, docExample, eventsOf, parseLines, runBash } from "../support/run-cli.js";
import { closedPort } from "../support/scenarios.js";
import { type SshServer, startSshServer, strangerKey } from "../support/ssh-server.js";
import { readRecords } from "../support/warm-server.js";

const e2e = useE2E();
let ssh: SshServer;
let remoteWorkspace: string;

beforeAll(async () => {
  ssh = await startSshServer(e2e.server.url);
  remoteWorkspace = join(ssh.remote.root, "project");
  mkdirSync(remoteWorkspace);
});
afterAll(async () => {
  await ssh?.close();
});

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
  } catch {
    return "";
  }
};

/** A check's first command: it fails (exit 9) unless it runs as the remote user, on the "host". */
const onTheHost = '{ test -n "$OC_EXEC_TEST_REMOTE" || { echo "not on the host"; exit 9; }; }';

/**
 * Nothing of the remote user's left running (a second's grace for the remote side to notice), and
 * nothing left in their TMPDIR: no private directory, none of opencode's native libraries.
 */
async function expectNoRemoteSurvivors(): Promise<void> {
  await waitFor(() => ssh.survivors().length === 0, 15_000, "every remote process of the turn to end");
  expect(ssh.survivors()).toEqual([]);
  expect(readdirSync(ssh.tmp)).toEqual([]);
}

describe.skipIf(process.platform !== "linux")("--ssh: one turn on another host", () => {
  it("a text turn: the same events as a local one, run.started names the host, nothing of the turn on the command line", async () => {
    const before = ssh.commands.length;
    const run = await e2e.run(["-q", ...ssh.args(), "--dir", remoteWorkspace, "scenario:plain ssh-text"]);
    expect(run.code).toBe(0);
    expect(run.types).toEqual(["run.started", "session.started", "step.started", "message", "step.finished", "result"]);
    expect(eventsOf(run, "run.started")[0]).toMatchObject({
      opencode: { path: "opencode", version: "1.18.33", host: ssh.destination },
      cwd: remoteWorkspace,
    });
    expect(run.result).toMatchObject({ class: "success", exit_code: 0, text: "Hello from the scripted model." });
    expect(e2e.requestsFor("ssh-text")).toHaveLength(1);
    // The binary's stamp, its version (first time only) and the turn, each the same fixed script:
    // no prompt, no argument, no value on the command line.
    const sent = ssh.commands.slice(before);
    expect(sent).toHaveLength(3);
    expect(new Set(sent).size).toBe(1);
    expect(sent[0]).not.toContain("ssh-text");
    expect(sent[0]).not.toContain(remoteWorkspace);
    expect(run.stderr).toBe("");
    // The version is remembered while the remote binary is unchanged: the stamp and the turn only.
    const again = ssh.commands.length;
    const second = await e2e.run(["-q", ...ssh.args(), "scenario:plain ssh-text-again"]);
    expect(second.code).toBe(0);
    expect(eventsOf(second, "run.started")[0]!.opencode.version).toBe("1.18.33");
    expect(ssh.commands.length - again).toBe(2);
    await expectNoRemoteSurvivors();
  }, 90_000);

  it("a tool turn runs its command on the host, in --dir there", async () => {
    const run = await e2e.run([
      "-q",
      "--auto",
      ...ssh.args(),
      "--dir",
      remoteWorkspace,
      "scenario:bash-write ssh-tool",
    ]);
    expect(run.code).toBe(0);
    expect(run.types).toEqual([
      "run.started",
      "session.started",
      "step.started",
      "tool",
      "step.finished",
      "step.started",
      "message",
      "step.finished",
      "result",
    ]);
    expect(readFileSync(join(remoteWorkspace, "fixed.txt"), "utf8")).toBe("fixed\n");
    // The workspace is there, not here: the changes are what the tools reported.
    expect(run.result.workspace_changes).toEqual({ source: "tools", files: [] });
    await expectNoRemoteSurvivors();
  }, 90_000);

  it("the environment: oc-exec's settings and --pass-env go over, the runner's other secrets do not", async () => {
    const dir = mkdtempSync(join(ssh.remote.root, "env-"));
    const run = await e2e.run(
      ["-q", "--auto", ...ssh.args(), "--dir", dir, "--pass-env", "OC_TEST_PASSED", "scenario:env-probe"],
      {
        extraEnv: { GITHUB_TOKEN: "ghp_localsecretvalue0000000000000000000", OC_TEST_PASSED: "it's passed $(not run)" },
      },
    );
    expect(run.code).toBe(0);
    const env = readFileSync(join(dir, "probe-env.txt"), "utf8");
    expect(env).toContain("OC_TEST_PASSED=it's passed $(not run)\n");
    expect(env).toContain("OPENCODE_AUTO_SHARE=false\n");
    expect(env).not.toContain("GITHUB_TOKEN");
    expect(env).not.toContain("ghp_localsecretvalue");
    // The remote user's own HOME, not the local one.
    expect(env).toContain(`HOME=${ssh.remote.root}\n`);
  }, 90_000);

  it("a denied permission is approval_denied, exit 2", async () => {
    const run = await e2e.run(["-q", ...ssh.args(), "--deny", "bash", "scenario:tool ssh-denied"]);
    expect(run.code).toBe(2);
    expect(run.result).toMatchObject({ class: "approval_denied", error: { name: "PermissionDenied" } });
    await expectNoRemoteSurvivors();
  }, 90_000);

  it("a provider's 401 on the host is api_error, exit 4", async () => {
    const run = await e2e.run(["-q", ...ssh.args(), "scenario:http-401 ssh"]);
    expect(run.code).toBe(4);
    expect(run.result).toMatchObject({ class: "api_error", error: { status_code: 401 } });
  }, 90_000);

  it("a 1 MB prompt reaches the remote model byte for byte", async () => {
    const chunk = `quotes ' " \` $(echo no) \\ tabs\t unicode ✓ 𝄞 ${"-".repeat(40)}\n`;
    let big = "scenario:echo-length ssh-big\n";
    while (Buffer.byteLength(big) < 1024 * 1024) big += chunk;
    big += "END-OF-PROMPT";
    const run = await e2e.run(["-q", ...ssh.args(), "-"], { stdin: big });
    expect(run.code).toBe(0);
    expect(e2e.requestsFor("ssh-big").at(-1)!.userText).toBe(big);
  }, 120_000);

  it("--timeout ends the remote opencode and its tool: timeout, exit 124, nothing left there", async () => {
    const run = await e2e.run(["-q", "--auto", ...ssh.args(), "--timeout", "12s", "scenario:sleep-tool ssh-timeout"]);
    expect(run.code).toBe(124);
    expect(run.result).toMatchObject({ class: "timeout" });
    await expectNoRemoteSurvivors();
  }, 90_000);

  it("SIGINT mid-tool: interrupted, exit 130, and the remote opencode and its tool are gone", async () => {
    let interrupted = false;
    const running = e2e.runRaw(["-q", "--auto", ...ssh.args(), "scenario:sleep-tool ssh-sigint"], {
      onSpawn: (child) => {
        void waitFor(() => ssh.survivors().some((p) => cmdline(p) === "sleep 300"), 60_000, "the remote tool").then(
          () => {
            interrupted = true;
            child.kill("SIGINT");
          },
        );
      },
    });
    const run = await running;
    expect(interrupted).toBe(true);
    expect(run.code).toBe(130);
    expect(parseLines(run.stdout).at(-1)).toMatchObject({ type: "result", class: "interrupted" });
    await expectNoRemoteSurvivors();
  }, 90_000);

  it("the connection cut mid-turn: agent_error SshConnectionLost (exit 1), and the remote side ends the turn", async () => {
    const running = e2e.runRaw(["-q", "--auto", ...ssh.args(), "scenario:sleep-tool ssh-drop"], {
      onSpawn: () => {
        void waitFor(() => ssh.survivors().some((p) => cmdline(p) === "sleep 300"), 60_000, "the remote tool").then(
          () => ssh.dropConnections(),
        );
      },
    });
    const run = await running;
    expect(run.code).toBe(1);
    const result = parseLines(run.stdout).at(-1);
    expect(result).toMatchObject({ type: "result", class: "agent_error", error: { name: "SshConnectionLost" } });
    await expectNoRemoteSurvivors();
  }, 90_000);

  it("--verify runs the check on the host, in --dir there: a failure sends the agent back there, and the check's output is its own", async () => {
    const dir = join(ssh.remote.root, "verify-ws");
    mkdirSync(dir);
    const run = await e2e.run([
      "-q",
      "--auto",
      ...ssh.args(),
      "--dir",
      dir,
      "--verify",
      `${onTheHost} && { test -f fixed.txt || { echo "fixed.txt is missing in $(pwd)"; exit 3; }; }`,
      "scenario:verify-fix ssh-verify",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ class: "success", text: "Fixed: the check passes now." });
    expect(eventsOf(run, "verify.finished").map((e) => [e.round, e.passed, e.exit_code, e.output])).toEqual([
      [1, false, 3, `fixed.txt is missing in ${dir}`],
      [2, true, 0, ""],
    ]);
    expect(readFileSync(join(dir, "fixed.txt"), "utf8")).toBe("fixed\n");
    await expectNoRemoteSurvivors();
  }, 90_000);

  it("--timeout during a check on the host: exit 124, and the check's processes there are gone", async () => {
    const run = await e2e.run([
      "-q",
      ...ssh.args(),
      "--dir",
      remoteWorkspace,
      "--timeout",
      "15s",
      "--verify",
      "sleep 300",
      "scenario:plain ssh-verify-timeout",
    ]);
    expect(run.code).toBe(124);
    expect(eventsOf(run, "verify.started")).toHaveLength(1);
    await expectNoRemoteSurvivors();
  }, 90_000);

  it("kill -9 of oc-exec mid-tool: the connection goes with it, and nothing is left on the host", async () => {
    const child = spawn(process.execPath, [BIN, "-q", "--auto", ...ssh.args(), "scenario:sleep-tool ssh-kill9"], {
      cwd: e2e.workspace(),
      env: e2e.home.env,
      stdio: ["ignore", "ignore", "ignore"],
    });
    await waitFor(() => ssh.survivors().some((p) => cmdline(p) === "sleep 300"), 60_000, "the remote tool");
    child.kill("SIGKILL");
    await expectNoRemoteSurvivors();
  }, 90_000);
});

describe.skipIf(process.platform !== "linux")("--ssh: what stops a turn before it starts (exit 5)", () => {
  it("an unreachable port: SshUnreachable naming the host and ssh's words", async () => {
    const port = await closedPort();
    const args = ssh.args().map((a) => (a === ssh.destination ? `127.0.0.1:${port}` : a));
    const run = await e2e.run(["-q", ...args, "scenario:plain never"]);
    expect(run.code).toBe(5);
    expect(run.types).toEqual(["run.started", "result"]);
    expect(run.result.error).toMatchObject({ name: "SshUnreachable" });
    expect(run.result.error!.message).toContain(`127.0.0.1:${port}`);
    expect(run.result.error!.message).toContain("Connection refused");
  }, 60_000);

  it("a key the host refuses: SshAuthFailed", async () => {
    const run = await e2e.run(["-q", ...ssh.args({ identity: strangerKey(e2e.home.root) }), "scenario:plain never"]);
    expect(run.code).toBe(5);
    expect(run.result.error).toMatchObject({ name: "SshAuthFailed" });
    expect(run.result.error!.message).toContain("Permission denied");
  }, 60_000);

  it("a host key that is not the known one: SshHostKeyMismatch, and nothing was sent", async () => {
    const before = ssh.commands.length;
    const run = await e2e.run(["-q", ...ssh.args({ knownHosts: ssh.foreignKnownHosts() }), "scenario:plain never"]);
    expect(run.code).toBe(5);
    expect(run.result.error).toMatchObject({ name: "SshHostKeyMismatch" });
    expect(run.result.error!.message).toContain("ssh-keygen -R 127.0.0.1");
    expect(ssh.commands.length).toBe(before);
    expect(e2e.requestsFor("never")).toEqual([]);
  }, 60_000);

  it("no opencode on the host: OpencodeNotFound naming the host", async () => {
    const run = await e2e.run(["-q", ...ssh.args(), "--opencode", "opencode-not-installed", "scenario:plain never"]);
    expect(run.code).toBe(5);
    expect(run.result.error).toMatchObject({ name: "OpencodeNotFound" });
    expect(run.result.error!.message).toBe(
      "opencode-not-installed is not on 127.0.0.1's PATH: install opencode there, or name it with --opencode (a path on 127.0.0.1)",
    );
  }, 60_000);

  it("opencode 2.x on the host: `run --standalone` there, never its shared service; a 2.x without it gets no turn (exit 5)", async () => {
    const dir = mkdtempSync(join(ssh.remote.root, "v2-"));
    const shared = join(dir, "shared-service.log");
    const record = join(dir, "call.json");
    // A 2.x there: the fake opencode, as 2.3.1, leaving any turn sent to the shared service in `shared`.
    const opencode2 = (name: string, more = "") => {
      const path = join(dir, name);
      writeFileSync(
        path,
        `#!/bin/sh\nFAKE_OPENCODE_VERSION=2.3.1 FAKE_OPENCODE_MODE=ok FAKE_OPENCODE_SHARED=${shared} FAKE_OPENCODE_RECORD=${record} ${more} exec ${process.execPath} ${FAKE_OPENCODE} "$@"\n`,
        { mode: 0o755 },
      );
      return path;
    };
    const ok = await e2e.run(["-q", ...ssh.args(), "--opencode", opencode2("opencode-2"), "go"]);
    expect(ok.code).toBe(0);
    expect(ok.result.class).toBe("success");
    expect((JSON.parse(readFileSync(record, "utf8")) as { argv: string[] }).argv.slice(0, 4)).toEqual([
      "run",
      "--format",
      "json",
      "--standalone",
    ]);
    rmSync(record);
    const old = await e2e.run([
      "-q",
      ...ssh.args(),
      "--opencode",
      opencode2("opencode-2-old", "FAKE_OPENCODE_NO_STANDALONE=1"),
      "go",
    ]);
    expect(old.code).toBe(5);
    expect(old.result.error).toMatchObject({
      name: "UnsupportedRelease",
      message: `opencode 2.3.1 on ${ssh.destination} has no \`run --standalone\`: its \`run\` would send the turn to opencode's shared background service (outside any sandbox, without this environment), so oc-exec does not run it; run it through ACP instead (--acp opencode)`,
    });
    expect(existsSync(record)).toBe(false);
    expect(existsSync(shared)).toBe(false);
    await expectNoRemoteSurvivors();
  }, 60_000);

  it("flags it cannot honour there are usage errors, before any connection", async () => {
    const before = ssh.commands.length;
    const sandboxed = await e2e.run(["-q", ...ssh.args(), "--sandbox", "read-only", "scenario:plain never"]);
    expect(sandboxed.code).toBe(5);
    expect(sandboxed.result.error!.message).toBe(
      "--ssh cannot be combined with a sandbox (--sandbox): the sandbox runs on this machine only",
    );
    const badOption = await e2e.run(["-q", ...ssh.args(), "--ssh-option", "-oProxyCommand", "scenario:plain never"]);
    expect(badOption.code).toBe(5);
    expect(badOption.result.error!.message).toBe('--ssh-option takes KEY=VALUE, not "-oProxyCommand"');
    const dashed = await e2e.run(["-q", "--ssh=-oProxyCommand=x", "scenario:plain never"]);
    expect(dashed.code).toBe(5);
    expect(dashed.result.error!.message).toContain("a destination that starts with -");
    expect(ssh.commands.length).toBe(before);
  }, 60_000);
});

describe.skipIf(process.platform !== "linux")(
  "--acp over --ssh: the agent runs on the host, its JSON-RPC over the connection",
  () => {
    it("a tool turn: `opencode acp` there, in --dir there; run.started names the agent and the host", async () => {
      const run = await e2e.run([
        "-q",
        "--auto",
        "--acp",
        "opencode",
        ...ssh.args(),
        "--dir",
        remoteWorkspace,
        "scenario:bash-write ssh-acp-tool",
      ]);
      expect(run.code, run.stderr).toBe(0);
      // One step, as a local --acp opencode turn gives (ACP reports the turn, not opencode's steps).
      expect(run.types).toEqual([
        "run.started",
        "session.started",
        "step.started",
        "tool",
        "message",
        "step.finished",
        "result",
      ]);
      expect(eventsOf(run, "run.started")[0]).toMatchObject({
        opencode: { path: "opencode acp", host: ssh.destination },
        acp: { name: "opencode", agent_name: "OpenCode", version: "1.18.33", protocol_version: 1 },
        cwd: remoteWorkspace,
      });
      // The tool ran there, as the remote user, in --dir there.
      expect(readFileSync(join(remoteWorkspace, "fixed.txt"), "utf8")).toBe("fixed\n");
      expect(run.result.workspace_changes).toEqual({ source: "tools", files: [] });
      // Nothing of the turn on the command line: the policy and the prompt went over stdin.
      expect(ssh.commands.at(-1)).not.toContain("ssh-acp-tool");
      await expectNoRemoteSurvivors();
    }, 90_000);

    it("the login directory (no --dir): the agent's session is where it runs there", async () => {
      const run = await e2e.run(["-q", "--acp", "opencode", ...ssh.args(), "scenario:plain ssh-acp-home"]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.result).toMatchObject({ class: "success", text: "Hello from the scripted model." });
      await expectNoRemoteSurvivors();
    }, 90_000);

    it("a denial there is approval_denied (exit 2); a stall is ended by --timeout (124), the agent and its tools gone there", async () => {
      const denied = await e2e.run(["-q", "--acp", "opencode", ...ssh.args(), "scenario:read-outside ssh-acp-denied"]);
      expect(denied.code, denied.stderr).toBe(2);
      expect(denied.result).toMatchObject({ class: "approval_denied", error: { name: "PermissionDenied" } });
      await expectNoRemoteSurvivors();
      const stalled = await e2e.run([
        "-q",
        "--auto",
        "--acp",
        "opencode",
        ...ssh.args(),
        "--timeout",
        "12s",
        "scenario:sleep-tool ssh-acp-timeout",
      ]);
      expect(stalled.code).toBe(124);
      expect(stalled.result).toMatchObject({ class: "timeout" });
      await expectNoRemoteSurvivors();
    }, 120_000);

    it("--verify runs its check on the host, in --dir there", async () => {
      const run = await e2e.run([
        "-q",
        "--auto",
        "--acp",
        "opencode",
        ...ssh.args(),
        "--dir",
        remoteWorkspace,
        "--verify",
        `${onTheHost} && test "$PWD" = ${remoteWorkspace}`,
        "scenario:plain ssh-acp-verify",
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(eventsOf(run, "verify.finished")).toMatchObject([{ passed: true }]);
      await expectNoRemoteSurvivors();
    }, 90_000);

    it("an agent that is not on the host's PATH: exit 5 naming it and the host", async () => {
      const run = await e2e.run(["-q", "--acp", "gemini", ...ssh.args(), "scenario:plain never"]);
      expect(run.code).toBe(5);
      expect(run.result.error).toEqual(
        expect.objectContaining({
          name: "AcpAgentNotFound",
          message:
            "--acp gemini: gemini is not on 127.0.0.1's PATH; install the agent there (its ACP command is gemini --acp), or give its path there",
        }),
      );
      await expectNoRemoteSurvivors();
    }, 60_000);
  },
);

describe.skipIf(process.platform !== "linux")("the --ssh examples of the README and docs/usage.md, as written", () => {
  it.each([
    ["README.md", "ssh"],
    ["docs/usage.md", "ssh-turn"],
    ["docs/usage.md", "ssh-server"],
  ])(
    "%s %s: the answer from the host, under bash -euo pipefail",
    async (file, name) => {
      mkdirSync(join(ssh.remote.root, "checkout"), { recursive: true });
      const bin = cliOnPath(e2e.home.root);
      const run = await runBash(["-euo", "pipefail"], docExample(file, name), {
        cwd: e2e.workspace(),
        env: { ...e2e.home.env, PATH: `${bin}:${e2e.home.env.PATH}`, OC_EXEC_SSH_CONFIG: ssh.configFile("build-box") },
      });
      // server start and stop say what they did on stderr; a turn with -q says nothing there.
      if (name === "ssh-server") expect(run.stderr).toMatch(/^oc-exec server start: opencode serving .* on build-box/);
      else expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout).toBe("Hello from the scripted model.\n");
      await expectNoRemoteSurvivors();
    },
    90_000,
  );
});

describe.skipIf(process.platform !== "linux")("server start --ssh: a warm server on another host", () => {
  it("start, an --attach turn with a tool there, stop: nothing left on either side", async () => {
    const dir = mkdtempSync(join(ssh.remote.root, "served-"));
    const started = await e2e.runRaw(["server", "start", ...ssh.args(), "--dir", dir, "--idle-timeout", "15m"]);
    expect(started.stderr).toContain(`on ${ssh.destination}, forwarded to`);
    expect(started.code).toBe(0);
    const url = started.stdout.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const record = readRecords(e2e.home.env.XDG_STATE_HOME!).find((r) => r.url === url)!;
    expect(record).toMatchObject({ dir, ssh: { destination: ssh.destination } });
    // The server runs as the remote user.
    expect(ssh.survivors().some((p) => cmdline(p).includes("serve --hostname 127.0.0.1 --port 0"))).toBe(true);

    const run = await e2e.run(["-q", "--attach", url, "--auto", "scenario:bash-write ssh-served"]);
    expect(run.code).toBe(0);
    expect(eventsOf(run, "run.started")[0]).toMatchObject({ opencode: { url, version: "1.18.33" }, cwd: dir });
    // The tool ran there, in the server's directory.
    expect(readFileSync(join(dir, "fixed.txt"), "utf8")).toBe("fixed\n");
    // A --verify check on it runs there too, in its directory.
    const checked = await e2e.run([
      "-q",
      "--attach",
      url,
      "--verify",
      `${onTheHost} && test -f fixed.txt && test "$(pwd)" = '${dir}'`,
      "scenario:plain ssh-served-check",
    ]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(eventsOf(checked, "verify.finished").map((e) => [e.round, e.passed, e.exit_code])).toEqual([[1, true, 0]]);

    const stopped = await e2e.runRaw(["server", "stop", url]);
    expect(stopped.code).toBe(0);
    await expectNoRemoteSurvivors();
    await waitFor(() => !isAlive(record.pid) && !isAlive(record.supervisor_pid), 10_000, "the local side to end");
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!).filter((r) => r.url === url)).toEqual([]);
  }, 120_000);

  it("batch --ssh: the batch's server runs there, every task in its --dir; both sides end with the batch", async () => {
    // Relative to the login directory there: nothing of it exists here.
    const dir = join(ssh.remote.root, "batch-rel");
    mkdirSync(dir);
    const tasks = join(e2e.home.root, "ssh-tasks.jsonl");
    writeFileSync(
      tasks,
      [
        { id: "write", prompt: "scenario:bash-write ssh-batch", auto: true },
        { id: "plain", prompt: "scenario:plain ssh-batch" },
      ]
        .map((t) => JSON.stringify(t))
        .join("\n"),
    );
    const run = await e2e.runRaw(["batch", tasks, "-q", ...ssh.args(), "--dir", "batch-rel"]);
    expect(run.code).toBe(0);
    const events = parseLines(run.stdout);
    const summary = events.at(-1) as { type: string; tasks: { id: string; class: string }[] };
    expect(summary.type).toBe("batch.result");
    expect(summary.tasks.map((t) => [t.id, t.class])).toEqual([
      ["write", "success"],
      ["plain", "success"],
    ]);
    expect(readFileSync(join(dir, "fixed.txt"), "utf8")).toBe("fixed\n");
    const started = events.filter((e) => e.type === "run.started") as { cwd: string; opencode: { url?: string } }[];
    expect(started.map((e) => e.cwd)).toEqual([dir, dir]);
    await expectNoRemoteSurvivors();
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!)).toEqual([]);
  }, 120_000);

  it("a task's verify runs on the host, in the task's dir there, over its server's connection; a failure sends the agent back", async () => {
    const dir = join(ssh.remote.root, "batch-verify");
    mkdirSync(dir);
    const tasks = join(e2e.home.root, "ssh-verify-tasks.jsonl");
    // The remote user's environment says where the check ran: the loopback "host" shares this
    // machine's files, so a check run here would see the same directory.
    const check = `${onTheHost} && { test -f fixed.txt || { echo "fixed.txt is missing in $(pwd)"; exit 3; }; }`;
    writeFileSync(
      tasks,
      JSON.stringify({ id: "fix", prompt: "scenario:verify-fix ssh-batch-verify", auto: true, verify: [check] }),
    );
    const run = await e2e.runRaw(["batch", tasks, "-q", ...ssh.args(), "--dir", dir]);
    expect(run.code, run.stderr).toBe(0);
    const events = parseLines(run.stdout) as {
      type: string;
      round?: number;
      passed?: boolean;
      exit_code?: number;
      output?: string;
    }[];
    // Here, the check would have said this machine's directory, and never passed.
    expect(
      events.filter((e) => e.type === "verify.finished").map((e) => [e.round, e.passed, e.exit_code, e.output]),
    ).toEqual([
      [1, false, 3, `fixed.txt is missing in ${dir}`],
      [2, true, 0, ""],
    ]);
    expect(readFileSync(join(dir, "fixed.txt"), "utf8")).toBe("fixed\n");
    await expectNoRemoteSurvivors();
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!)).toEqual([]);
  }, 120_000);

  it("task lines naming hosts: one server per host, each task in its dir there, the rest here; all end with the batch", async () => {
    // A second host: its own remote user, workspace and keys.
    const other = await startSshServer(e2e.server.url);
    try {
      const dirA = join(ssh.remote.root, "spread-a");
      const dirB = join(other.remote.root, "spread-b");
      mkdirSync(dirA);
      mkdirSync(dirB);
      const local = mkdtempSync(join(e2e.home.root, "spread-local-"));
      const config = join(e2e.home.root, "two-hosts.config");
      writeFileSync(
        config,
        readFileSync(ssh.configFile("host-a"), "utf8") + readFileSync(other.configFile("host-b"), "utf8"),
      );
      const tasks = join(e2e.home.root, "spread-tasks.jsonl");
      writeFileSync(
        tasks,
        [
          { id: "on-a", prompt: "scenario:bash-write spread-a", auto: true, ssh: "host-a", dir: dirA },
          { id: "on-b", prompt: "scenario:bash-write spread-b", auto: true, ssh: "host-b", dir: "spread-b" },
          { id: "here", prompt: "scenario:bash-write spread-here", auto: true },
        ]
          .map((t) => JSON.stringify(t))
          .join("\n"),
      );
      const run = await e2e.runRaw(["batch", tasks, "-q", "--concurrency", "3", "--dir", local], {
        extraEnv: { OC_EXEC_SSH_CONFIG: config },
      });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const events = parseLines(run.stdout);
      const summary = events.at(-1) as { type: string; tasks: { id: string; class: string }[] };
      expect(summary.tasks.map((t) => [t.id, t.class])).toEqual([
        ["on-a", "success"],
        ["on-b", "success"],
        ["here", "success"],
      ]);
      const started = new Map(
        (
          events.filter((e) => e.type === "run.started") as {
            task_id: string;
            cwd: string;
            opencode: { host?: string };
          }[]
        ).map((e) => [e.task_id, [e.opencode.host ?? null, e.cwd]]),
      );
      expect(Object.fromEntries(started)).toEqual({
        "on-a": ["host-a", dirA],
        "on-b": ["host-b", dirB],
        here: [null, local],
      });
      // Each tool ran where its task said, as that host's user.
      for (const dir of [dirA, dirB, local]) expect(readFileSync(join(dir, "fixed.txt"), "utf8")).toBe("fixed\n");
      await expectNoRemoteSurvivors();
      await waitFor(() => other.survivors().length === 0, 15_000, "the second host's processes to end");
      expect(readRecords(e2e.home.env.XDG_STATE_HOME!)).toEqual([]);
    } finally {
      await other.close();
    }
  }, 180_000);

  it("a host it cannot reach: exit 5 naming it, no record", async () => {
    const port = await closedPort();
    const args = ssh.args().map((a) => (a === ssh.destination ? `127.0.0.1:${port}` : a));
    const started = await e2e.runRaw(["server", "start", ...args]);
    expect(started.code).toBe(5);
    expect(started.stdout).toBe("");
    expect(started.stderr).toContain("SshUnreachable: cannot reach 127.0.0.1:");
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!)).toEqual([]);
  }, 60_000);
});
