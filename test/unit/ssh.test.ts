// The pure parts of --ssh: the remote script's preamble and markers, ssh's command lines, what its
// failures mean, and which variables go to the host.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { forwardedEnv } from "../../src/hosts/ssh/remote-launch.js";
import { MARKER, parseMarker, preamble, remoteCommand, shellQuote } from "../../src/hosts/ssh/remote-script.js";
import { commandArgs, masterArgs, sshFailure } from "../../src/hosts/ssh/ssh-args.js";
import { destinationProblem, splitDestination } from "../../src/plan/ssh-spec.js";

describe("shellQuote", () => {
  it("survives a shell for every awkward value", () => {
    for (const value of ["", "plain", "it's", "'", "''", "$(echo x)", "`x`", "a\nb", "\\", '"', "-n", "*"]) {
      const out = spawnSync("/bin/sh", ["-c", `printf %s ${shellQuote(value)}`], { encoding: "utf8" });
      expect(out.stdout).toBe(value);
    }
  });
});

describe("the remote script's preamble", () => {
  const run = {
    mode: "turn" as const,
    dir: "/srv/my dir",
    graceSeconds: 2.5,
    env: { A: "x'y" },
    argv: ["opencode", "run", "it's"],
  };

  it("sets the variables, the mode, the grace, the directory and the command, then the input's size in bytes", () => {
    expect(preamble(run, "é")).toBe(
      [
        "export A='x'\\''y'",
        "oc_mode=turn",
        "oc_grace=3",
        "oc_dir='/srv/my dir'",
        "set -- 'opencode' 'run' 'it'\\''s'",
        "--oc-exec-preamble-end--",
        "2",
        "",
      ].join("\n"),
    );
  });

  it("drops a variable name a shell would not take, rather than evaluating it", () => {
    expect(preamble({ ...run, env: { "A;rm -rf /": "x", OK: "1" } }, "")).not.toContain("rm -rf");
  });

  it("runs under sh: the command gets its input exactly and the directory, and reports its exit", () => {
    const input = "line one\n'two' $(three)\n";
    const out = spawnSync("/bin/sh", ["-c", remoteCommand()], {
      input:
        preamble(
          { mode: "side", dir: "/", graceSeconds: 1, env: { B: "b" }, argv: ["sh", "-c", 'echo "$B $PWD"; cat'] },
          input,
        ) + input,
      encoding: "utf8",
    });
    expect(out.stdout).toBe(`b /\n${input}`);
    expect(out.status).toBe(0);
  });

  it("a missing command is its own status and marker, not the command's", () => {
    const out = spawnSync("/bin/sh", ["-c", remoteCommand()], {
      input: preamble({ mode: "side", dir: null, graceSeconds: 1, env: {}, argv: ["no-such-binary-here"] }, ""),
      encoding: "utf8",
    });
    expect(out.status).toBe(98);
    expect(out.stderr).toBe(`${MARKER} not-found\n`);
  });

  it("the command gets a TMPDIR of its own, gone when it ends (both modes); a killed script's is swept, a live one's kept", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "oc-exec-unit-remote-"));
    try {
      const dead = spawnSync("/bin/true").pid;
      mkdirSync(join(tmp, `oc-exec-remote-${dead}.abc123`));
      writeFileSync(join(tmp, `oc-exec-remote-${dead}.abc123`, "lib.so"), "x");
      mkdirSync(join(tmp, `oc-exec-remote-${process.pid}.def456`));
      mkdirSync(join(tmp, "someone-else"));
      for (const mode of ["side", "turn"] as const) {
        // A turn's stdin stays open while it runs (its end would stop the command): written, not ended.
        const child = spawn("/bin/sh", ["-c", remoteCommand()], { env: { PATH: process.env.PATH, TMPDIR: tmp } });
        child.stdin.write(
          preamble(
            { mode, dir: null, graceSeconds: 1, env: {}, argv: ["sh", "-c", 'echo "$TMPDIR"; touch "$TMPDIR/.x.so"'] },
            "",
          ),
        );
        let stdout = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        const status = await new Promise((resolve) => child.on("close", resolve));
        child.stdin.destroy();
        expect(status).toBe(0);
        expect(stdout).toMatch(new RegExp(`^${tmp}/oc-exec-remote-\\d+\\.\\w{6}\\n$`));
        expect(existsSync(stdout.trim())).toBe(false);
      }
      expect(readdirSync(tmp).sort()).toEqual([`oc-exec-remote-${process.pid}.def456`, "someone-else"]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("the connection gone mid-turn (stdin ends, output goes nowhere): the command is stopped and its TMPDIR removed", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "oc-exec-unit-remote-"));
    try {
      const child = spawn("/bin/sh", ["-c", remoteCommand()], { env: { PATH: process.env.PATH, TMPDIR: tmp } });
      child.stdin.write(preamble({ mode: "turn", dir: null, graceSeconds: 1, env: {}, argv: ["sleep", "300"] }, ""));
      await new Promise<void>((resolve) =>
        child.stderr.on("data", (d: Buffer) => d.toString().includes(`${MARKER} started`) && resolve()),
      );
      expect(readdirSync(tmp)).toHaveLength(1);
      child.stdout.destroy();
      child.stderr.destroy();
      child.stdin.end();
      // sh reports the stopped command ("Terminated") to a closed pipe: that must not kill it first.
      const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
        child.on("exit", (c, s) => resolve([c, s])),
      );
      expect([code, signal]).toEqual([143, null]);
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("stream mode (an ACP agent): the command reads the rest of stdin; its end stops a command that ignores it", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "oc-exec-unit-remote-"));
    try {
      const child = spawn("/bin/sh", ["-c", remoteCommand()], { env: { PATH: process.env.PATH, TMPDIR: tmp } });
      const argv = ["sh", "-c", 'while read -r l; do echo "got $l"; [ "$l" = last ] && break; done; exec sleep 300'];
      child.stdin.write(preamble({ mode: "stream", dir: null, graceSeconds: 1, env: {}, argv }, ""));
      let stdout = "";
      const answered = new Promise<void>((resolve) =>
        child.stdout.on("data", (d: Buffer) => {
          stdout += d.toString();
          if (stdout.includes("got last\n")) resolve();
        }),
      );
      child.stdin.write("one\n");
      child.stdin.write("last\n");
      await answered;
      expect(stdout).toBe("got one\ngot last\n");
      // The command now sleeps, deaf to stdin: its end stops it all the same, and nothing is left.
      child.stdin.end();
      const code = await new Promise((resolve) => child.on("close", resolve));
      expect(code).toBe(143);
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("markers", () => {
    expect(parseMarker(`${MARKER} started 123 /srv/my dir`)).toEqual({ kind: "started", cwd: "/srv/my dir" });
    expect(parseMarker(`${MARKER} exit 143`)).toEqual({ kind: "exit", status: 143 });
    expect(parseMarker(`${MARKER} no-dir`)).toEqual({ kind: "problem", what: "no-dir" });
    expect(parseMarker("INFO service=bus exit 1")).toBeNull();
  });
});

describe("ssh's command lines", () => {
  const input = {
    spec: { destination: "deploy@build-1:2222", options: ["ProxyJump=bastion"], configFile: null },
    controlPath: "/tmp/c",
    connectTimeoutMs: 60_000,
  };

  it("destinations", () => {
    expect(splitDestination("deploy@build-1:2222")).toEqual({ target: "deploy@build-1", port: "2222" });
    expect(splitDestination("[::1]:22")).toEqual({ target: "::1", port: "22" });
    expect(splitDestination("gpu-box")).toEqual({ target: "gpu-box", port: null });
    expect(destinationProblem("-oProxyCommand=x")).toBe("a destination that starts with -");
    expect(destinationProblem("host:70000")).toBe("port 70000, outside 1-65535");
    expect(destinationProblem("user@host")).toBeNull();
  });

  it("the user's options before the unattended defaults: ssh keeps the first value, so the user's win", () => {
    const args = masterArgs(input);
    expect(args.slice(0, 9)).toEqual([
      "-M",
      "-N",
      "-T",
      "-o",
      "ControlPersist=no",
      "-o",
      "ControlPath=/tmp/c",
      "-o",
      "ProxyJump=bastion",
    ]);
    expect(args.indexOf("ProxyJump=bastion")).toBeLessThan(args.indexOf("BatchMode=yes"));
    expect(args).toContain("BatchMode=yes");
    expect(args).toContain("StrictHostKeyChecking=accept-new");
    expect(args).toContain("ConnectTimeout=60");
    expect(args).toContain("ProxyJump=bastion");
    expect(args.slice(-4)).toEqual(["-p", "2222", "--", "deploy@build-1"]);
    expect(commandArgs(input, "CMD").slice(-2)).toEqual(["deploy@build-1", "CMD"]);
  });

  it("failures: a changed host key, a refused key, an unreachable host", () => {
    expect(
      sshFailure("h:22", "@@@@@\n@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @\nHost key verification failed.")
        .name,
    ).toBe("SshHostKeyMismatch");
    expect(sshFailure("u@h", "u@h: Permission denied (publickey).").message).toBe(
      "h refused to let oc-exec in (ssh: u@h: Permission denied (publickey).). ssh runs with BatchMode=yes: it needs a key (or an agent) the host accepts, never a password",
    );
    expect(sshFailure("h", "ssh: Could not resolve hostname h: Name or service not known")).toEqual({
      name: "SshUnreachable",
      message: "cannot reach h over ssh (ssh: Could not resolve hostname h: Name or service not known)",
    });
  });
});

describe("what goes to the host", () => {
  it("what oc-exec set or changed, and --pass-env; never the rest of the runner's environment or PWD", () => {
    const base = { GITHUB_TOKEN: "t", OPENCODE_PERMISSION: "{}", MY_VAR: "v", OTHER: "o", PWD: "/here" };
    const invocation = { ...base, OPENCODE_PERMISSION: '{"bash":"deny"}', OPENCODE_AUTO_SHARE: "false", PWD: "/there" };
    expect(forwardedEnv(invocation, base, ["MY_*"])).toEqual({
      OPENCODE_PERMISSION: '{"bash":"deny"}',
      OPENCODE_AUTO_SHARE: "false",
      MY_VAR: "v",
    });
  });
});
