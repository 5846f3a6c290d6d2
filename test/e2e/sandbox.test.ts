// The sandbox attacked for real: the real opencode, the scripted model playing a prompt-injected
// agent (`scenario:escape`: one bash call that writes outside the workspace, reads planted secrets,
// prints secret variables and reaches a canary server by curl, raw TCP and a DNS name), with --auto
// so that opencode's own external_directory rule approves and the sandbox is what refuses. Each
// attack is shown succeeding without the sandbox in the same file.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { OcEvent } from "../../src/contract/schema.js";
import { useE2E } from "../support/e2e.js";
import {
  allText,
  expectEscapeHeld,
  outside,
  plant,
  processesWithHome,
  refusedWarnings,
  secret,
  toolOutput,
  useCanary,
} from "../support/escape.js";
import { expectKeyOnlyInHeader, keyBackAttack } from "../support/key-attack.js";
import { sandboxSkip } from "../support/sandbox-skip.js";
import { keyedProvider, tlsFront } from "../support/tls-front.js";

const e2e = useE2E();
const { unavailable, skip } = await sandboxSkip("sandbox tests (test/e2e/sandbox.test.ts)");

const hits = useCanary();

/** The real bwrap on PATH. */
const realBwrap = () =>
  (process.env.PATH ?? "")
    .split(":")
    .map((d) => join(d, "bwrap"))
    .find((p) => existsSync(p)) ?? "/usr/bin/bwrap";

/** The escape scenario in a planted workspace: run from it, or (fromElsewhere) from its parent with --dir. */
async function escapeTurn(args: string[], { fromElsewhere = false } = {}) {
  const planted = plant(e2e);
  const marker = `escape-${secret().slice(0, 8)}`;
  hits.reset();
  const where = fromElsewhere ? ["--dir", planted.workspace] : [];
  const run = await e2e.run([...args, ...where, "--auto", `scenario:escape canary=127.0.0.1:${hits.port} ${marker}`], {
    cwd: fromElsewhere ? dirname(planted.workspace) : planted.workspace,
    extraEnv: planted.tokens,
  });
  const model = JSON.stringify(e2e.requestsFor(marker));
  return { ...planted, run, model, output: toolOutput(run.events), marker };
}

describe.skipIf(skip)("--sandbox workspace-write against a prompt-injected agent", () => {
  it("no write outside the workspace, no secret read or printed, no connection but the provider's; the turn still succeeds", async () => {
    // Run from another directory (--dir): the workspace's own files that run code later are kept
    // read-only all the same (the library keeps those of the directory it runs from).
    const t = await escapeTurn(["--sandbox", "workspace-write"], { fromElsewhere: true });
    expect(t.run.stderr).not.toContain("SandboxUnavailable");
    expect(t.run.code).toBe(0);
    expectEscapeHeld(e2e, t, hits);
    expect(existsSync(join(t.workspace, ".gitmodules"))).toBe(false);
    // The planted secrets and the secret variables reach neither stdout, stderr, the model, nor a file.
    const everywhere = [t.run.stdout, t.run.stderr, t.model, allText(t.workspace)].join("\n");
    for (const value of t.secrets) expect(everywhere).not.toContain(value);
    expect(hits.connections).toBe(0);
    // The refusals the proxy could name: curl's and the DNS name's; the raw connection cannot be.
    expect(refusedWarnings(t.run.events)).toEqual([
      `the sandbox refused a connection to 127.0.0.1:${hits.port}: not an allowed host (--allow-host 127.0.0.1:${hits.port} lets it through)`,
      `the sandbox refused a connection to canary.localhost:${hits.port}: not an allowed host (--allow-host canary.localhost:${hits.port} lets it through)`,
    ]);
    const started = t.run.events[0];
    expect(started?.type === "run.started" && started.sandbox).toMatchObject({
      mode: "workspace-write",
      allowed_hosts: [`127.0.0.1:${e2e.server.port}`],
    });
    expect(t.run.result.sandbox).toMatchObject({ mode: "workspace-write", refused_connections: 2 });
    expect(t.run.result.sandbox?.writable).toContain(t.workspace);
  }, 60_000);

  it("read-only refuses the workspace write too", async () => {
    const t = await escapeTurn(["--sandbox", "read-only"]);
    expect(t.run.code).toBe(0);
    expect(t.output).toContain("write inside.txt: refused");
    expect(t.output).toContain("write ../escape.txt: thrown away");
    for (const path of outside(e2e, t.workspace)) expect(existsSync(path), path).toBe(false);
    expect(existsSync(join(t.workspace, "inside.txt"))).toBe(false);
    expect(t.run.result.sandbox).toMatchObject({ mode: "read-only", refused_connections: 2 });
    expect(t.run.result.sandbox?.writable).not.toContain(t.workspace);
  }, 60_000);

  it("--allow-host lets a named host through, and only on its port", async () => {
    const t = await escapeTurn(["--sandbox", "workspace-write", "--allow-host", `127.0.0.1:${hits.port}`]);
    expect(t.run.code).toBe(0);
    expect(t.output).toContain(`curl 127.0.0.1:${hits.port}: done`);
    // The raw connection still has no way out of the namespace.
    expect(t.output).toContain(`tcp 127.0.0.1:${hits.port}: refused`);
    expect(hits.requests).toEqual(["/curl"]);
  }, 60_000);
});

/** A turn whose bash call writes its environment into the workspace; what the provider got. */
async function keyProbe(args: string[], env: Record<string, string>) {
  const key = secret();
  const marker = `probe-${secret().slice(0, 8)}`;
  const dir = e2e.workspace();
  const run = await e2e.run([...args, "--auto", `scenario:env-probe ${marker}`], {
    cwd: dir,
    extraEnv: { ...env, OC_TEST_PROVIDER_KEY: key },
  });
  const probe = readFileSync(join(dir, "probe-env.txt"), "utf8");
  return {
    run,
    key,
    probe,
    inside: /^OC_TEST_PROVIDER_KEY=(.*)$/m.exec(probe)?.[1],
    sent: e2e.requestsFor(marker).map((r) => r.authorization),
  };
}

describe.skipIf(skip)("the provider's key never enters the sandbox (credential masking)", () => {
  it("a plain HTTP provider: the sandbox sees a stand-in, the provider gets the real key; without a sandbox the tools see it", async () => {
    const env = { OPENCODE_CONFIG_CONTENT: keyedProvider(e2e.server.url) };
    const boxed = await keyProbe(["--sandbox", "workspace-write"], env);
    expect(boxed.run.code).toBe(0);
    expect(boxed.inside).toMatch(/^fake_value_[\w-]+$/);
    expect(boxed.probe).not.toContain(boxed.key);
    expect(boxed.sent).toEqual([`Bearer ${boxed.key}`, `Bearer ${boxed.key}`]);

    const bare = await keyProbe([], env);
    expect(bare.run.code).toBe(0);
    expect(bare.inside).toBe(bare.key);
    expect(bare.sent).toEqual([`Bearer ${bare.key}`, `Bearer ${bare.key}`]);
  }, 90_000);

  it("an HTTPS provider: the proxy terminates TLS for it (opencode trusts the sandbox's CA) and puts the real key in", async () => {
    const front = await tlsFront(e2e.server.url, e2e.home.root);
    try {
      // NODE_EXTRA_CA_CERTS: how the provider's own certificate is trusted, here and by the proxy.
      const env = { OPENCODE_CONFIG_CONTENT: keyedProvider(front.url), NODE_EXTRA_CA_CERTS: front.ca };
      const boxed = await keyProbe(["--sandbox", "workspace-write"], env);
      expect(boxed.run.code).toBe(0);
      expect(boxed.run.result.class).toBe("success");
      expect(boxed.inside).toMatch(/^fake_value_[\w-]+$/);
      expect(boxed.probe).not.toContain(boxed.key);
      // Inside, TLS clients trust the sandbox's own CA, not the provider's certificate.
      expect(/^NODE_EXTRA_CA_CERTS=(.*)$/m.exec(boxed.probe)?.[1]).not.toBe(front.ca);
      expect(boxed.sent).toEqual([`Bearer ${boxed.key}`, `Bearer ${boxed.key}`]);
      // The proxy's CA, and the leaf it minted for the provider's host, are kept where no sandbox
      // can read them (oc-exec's state directory), made once and used again.
      const caDir = join(e2e.home.env.XDG_STATE_HOME!, "oc-exec", "sandbox-ca");
      const kept = [join(caDir, "ca.key"), join(caDir, "leaf-127.0.0.1.json")];
      for (const file of kept) expect(statSync(file).mode & 0o777).toBe(0o600);
      const made = kept.map((file) => statSync(file).mtimeMs);
      const again = await keyProbe(["--sandbox", "workspace-write"], env);
      expect(again.run.code).toBe(0);
      expect(again.sent).toEqual([`Bearer ${again.key}`, `Bearer ${again.key}`]);
      expect(kept.map((file) => statSync(file).mtimeMs)).toEqual(made);
    } finally {
      front.close();
    }
  }, 90_000);
});

// A provider with no key in its configuration: opencode takes it from its key store, the file
// `opencode auth login` writes (auth.json in its data directory) or the variable that replaces it.
const bareProvider = () =>
  JSON.stringify({
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL: e2e.server.url },
        models: { "fake-model": { name: "Scripted" } },
      },
    },
    model: "fake/fake-model",
  });
const authFile = () => join(e2e.home.env.XDG_DATA_HOME!, "opencode", "auth.json");

describe.skipIf(skip)("opencode's own key store never enters the sandbox either", () => {
  async function storeProbe(args: string[], env: Record<string, string> = {}) {
    const marker = `store-${secret().slice(0, 8)}`;
    const dir = e2e.workspace();
    const run = await e2e.run([...args, "--auto", `scenario:env-probe ${marker}`], {
      cwd: dir,
      extraEnv: { OPENCODE_CONFIG_CONTENT: bareProvider(), ...env },
    });
    const probe = readFileSync(join(dir, "probe-env.txt"), "utf8");
    return {
      run,
      probe,
      keys: [...probe.matchAll(/"key":\s*"([^"]+)"/g)].map((m) => m[1]),
      sent: e2e.requestsFor(marker).map((r) => r.authorization),
    };
  }

  it("auth.json: the tools read a stand-in for the key, the provider gets the real one; without a sandbox the tools read it", async () => {
    const key = secret();
    mkdirSync(dirname(authFile()), { recursive: true });
    writeFileSync(authFile(), JSON.stringify({ fake: { type: "api", key } }, null, 2));
    try {
      const boxed = await storeProbe(["--sandbox", "workspace-write"]);
      expect(boxed.run.code).toBe(0);
      expect(boxed.keys).toEqual([expect.stringMatching(/^fake_value_[\w-]+$/)]);
      expect(boxed.probe).not.toContain(key);
      expect(boxed.sent).toEqual([`Bearer ${key}`, `Bearer ${key}`]);
      // The file itself is untouched.
      expect(JSON.parse(readFileSync(authFile(), "utf8"))).toEqual({ fake: { type: "api", key } });

      const bare = await storeProbe([]);
      expect(bare.run.code).toBe(0);
      expect(bare.keys).toEqual([key]);
      expect(bare.sent).toEqual([`Bearer ${key}`, `Bearer ${key}`]);
    } finally {
      rmSync(authFile(), { force: true });
    }
  }, 90_000);

  it("OPENCODE_AUTH_CONTENT: the same, the rest of its JSON intact", async () => {
    const key = secret();
    const env = { OPENCODE_AUTH_CONTENT: JSON.stringify({ fake: { type: "api", key } }) };
    const boxed = await storeProbe(["--sandbox", "workspace-write"], env);
    expect(boxed.run.code).toBe(0);
    const inside = /^OPENCODE_AUTH_CONTENT=(.*)$/m.exec(boxed.probe)?.[1];
    expect(JSON.parse(inside!)).toEqual({ fake: { type: "api", key: expect.stringMatching(/^fake_value_[\w-]+$/) } });
    expect(boxed.probe).not.toContain(key);
    expect(boxed.sent).toEqual([`Bearer ${key}`, `Bearer ${key}`]);

    const bare = await storeProbe([], env);
    expect(bare.run.code).toBe(0);
    expect(/^OPENCODE_AUTH_CONTENT=(.*)$/m.exec(bare.probe)?.[1]).toBe(env.OPENCODE_AUTH_CONTENT);
    expect(bare.sent).toEqual([`Bearer ${key}`, `Bearer ${key}`]);
  }, 90_000);
});

describe.skipIf(skip)("the real key goes into the credential header only: a tool cannot get it back", () => {
  it("a plain HTTP provider: echoed as a model name, printed for the model, the key stays outside", async () => {
    const key = secret();
    const env = { OPENCODE_CONFIG_CONTENT: keyedProvider(e2e.server.url), OC_TEST_PROVIDER_KEY: key };
    expectKeyOnlyInHeader(await keyBackAttack(e2e, e2e.server.url, env), key);
  }, 90_000);

  it("an HTTPS provider (the proxy terminates TLS): the same", async () => {
    const front = await tlsFront(e2e.server.url, e2e.home.root);
    try {
      const key = secret();
      const env = {
        OPENCODE_CONFIG_CONTENT: keyedProvider(front.url),
        NODE_EXTRA_CA_CERTS: front.ca,
        OC_TEST_PROVIDER_KEY: key,
      };
      expectKeyOnlyInHeader(await keyBackAttack(e2e, front.url, env), key);
    } finally {
      front.close();
    }
  }, 90_000);

  it("a key in auth.json (which oc-exec's redaction does not know): the same", async () => {
    const key = secret();
    mkdirSync(dirname(authFile()), { recursive: true });
    writeFileSync(authFile(), JSON.stringify({ fake: { type: "api", key } }, null, 2));
    try {
      expectKeyOnlyInHeader(await keyBackAttack(e2e, e2e.server.url, { OPENCODE_CONFIG_CONTENT: bareProvider() }), key);
    } finally {
      rmSync(authFile(), { force: true });
    }
  }, 90_000);
});

describe.skipIf(skip)("the escape rehearsal: watching the sandbox hold on your own runner", () => {
  it("--rehearse escape --sandbox workspace-write: every escape refused, the turn a success", async () => {
    const run = await e2e.run(["--rehearse", "escape", "--sandbox", "workspace-write", "go"]);
    expect(run.code).toBe(0);
    const output = toolOutput(run.events);
    // The workspace's parent and HOME: the sandbox's own HOME, whose writes go with it.
    const inHome = (line: string) => line.startsWith("write ../escape.txt") || line.startsWith("write ~/.bashrc");
    for (const line of output.split("\n").filter((l) => /^(write|curl|tcp|dns) /.test(l)))
      expect(line).toMatch(
        line.startsWith("write inside.txt") ? /: done$/ : inHome(line) ? /: thrown away$/ : /: refused$/,
      );
    expect(existsSync(join(e2e.home.root, ".bashrc"))).toBe(false);
    expect(output).toContain("tokens: GITHUB_TOKEN=unset NPM_TOKEN=unset");
    expect(output).not.toContain("rehearsal-fake");
    // What would run later, outside: git's internals and a file hard-linked to one outside.
    expect(output).toContain("write .git/commondir: refused");
    expect(output).toContain("write linked.txt (a hard link to a file outside): refused");
    expect(output).toMatch(/^pypirc: cat: .*No such file or directory$/m);
    expect(run.result.sandbox?.refused_connections).toBe(2);
  }, 60_000);

  it("OC_EXEC_SANDBOX reaches a rehearsal too", async () => {
    const run = await e2e.run(["--rehearse", "escape", "go"], { extraEnv: { OC_EXEC_SANDBOX: "read-only" } });
    expect(run.result.sandbox?.mode).toBe("read-only");
    expect(toolOutput(run.events)).toContain("write inside.txt: refused");
  }, 60_000);
});

describe.skipIf(skip)("every path of a single turn runs in the sandbox", () => {
  it("a conversation: each turn in the one sandbox of the run, in one session", async () => {
    const dir = e2e.workspace();
    const lines = ['{"prompt": "scenario:bash-write one"}', '{"prompt": "scenario:plain two"}'].join("\n");
    const run = await e2e.run(["--input-format", "jsonl", "--sandbox", "read-only", "--auto"], {
      cwd: dir,
      stdin: `${lines}\n`,
    });
    const results = run.events.filter((e) => e.type === "result");
    expect(results.map((r) => r.type === "result" && [r.turn, r.sandbox?.mode])).toEqual([
      [1, "read-only"],
      [2, "read-only"],
    ]);
    // The first turn's command could not write the workspace.
    expect(existsSync(join(dir, "fixed.txt"))).toBe(false);
    expect(run.events.at(-1)).toMatchObject({ type: "conversation.result", exit_code: 0 });
  }, 90_000);

  it("the library: runTurn({ sandbox }) runs sandboxed and ends with result.sandbox", async () => {
    const { runTurn } = await import("../../dist/index.js");
    const dir = e2e.workspace();
    const events: OcEvent[] = [];
    for await (const event of runTurn({
      prompt: "scenario:bash-write lib",
      dir,
      env: e2e.home.env,
      sandbox: "read-only",
      auto: true,
    }))
      events.push(event as OcEvent);
    const result = events.at(-1);
    expect(result).toMatchObject({ type: "result", class: "success", sandbox: { mode: "read-only" } });
    expect(existsSync(join(dir, "fixed.txt"))).toBe(false);
  }, 60_000);
});

describe.skipIf(skip)("a sandboxed turn that is stopped leaves nothing behind", () => {
  it("--timeout ends opencode, its tools and the sandbox's helpers: exit 124, no process left with the run's HOME", async () => {
    const dir = e2e.workspace();
    const run = await e2e.run(["--sandbox", "workspace-write", "--auto", "--timeout", "4s", "scenario:sleep-tool"], {
      cwd: dir,
    });
    expect(run.code).toBe(124);
    expect(run.result.sandbox?.mode).toBe("workspace-write");
    // Every process of the run inherited the throwaway HOME (the sandbox keeps HOME).
    expect(processesWithHome(e2e.home.root)).toEqual([]);
  }, 60_000);
});

describe("the same attacks without a sandbox succeed (what the sandbox is for)", () => {
  it("writes land outside, the secrets reach the model, the canary is reached; what oc-exec writes is still redacted", async () => {
    const t = await escapeTurn([], { fromElsewhere: true });
    try {
      expect(t.run.code).toBe(0);
      expect(t.output).toContain("write ../escape.txt: done");
      expect(t.output).toContain("write .vscode/tasks.json: done");
      expect(t.output).toContain("write .gitmodules: done");
      for (const path of outside(e2e, t.workspace)) expect(existsSync(path), path).toBe(true);
      for (const value of t.secrets) expect(t.model).toContain(value);
      // What oc-exec writes still holds none of them: the tokens by value (their variables'
      // names say they are secret), the key and the AWS secret by shape.
      expect(t.output).toContain("tokens: GITHUB_TOKEN=[REDACTED] NPM_TOKEN=[REDACTED]");
      expect(t.output).toContain("server password is [REDACTED]");
      expect(t.output).toContain("ssh key: [REDACTED PRIVATE KEY]");
      expect(t.output).toContain("aws_secret_access_key = [REDACTED]");
      for (const value of t.secrets) expect(t.run.stdout + t.run.stderr).not.toContain(value);
      expect(hits.requests.sort()).toEqual(["/curl", "/dns", "/tcp"]);
      expect(t.run.events[0]).not.toHaveProperty("sandbox");
      expect(t.run.result).not.toHaveProperty("sandbox");
    } finally {
      for (const path of outside(e2e, t.workspace)) rmSync(path, { force: true });
    }
  }, 60_000);
});

describe("fails closed", () => {
  it("without bubblewrap, --sandbox workspace-write is exit 5 before anything runs, and the model sees no request", async () => {
    // A PATH with what oc-exec needs (node, git) but no bwrap.
    const bin = mkdtempSync(join(e2e.home.root, "nobwrap-"));
    for (const tool of ["node", "git", "bash", "sh"]) {
      const found = (process.env.PATH ?? "")
        .split(":")
        .map((d) => join(d, tool))
        .find((p) => existsSync(p));
      if (found) symlinkSync(found, join(bin, tool));
    }
    const marker = `closed-${secret().slice(0, 8)}`;
    const run = await e2e.run(["--sandbox", "workspace-write", `scenario:plain ${marker}`], {
      extraEnv: { PATH: bin },
    });
    expect(run.code).toBe(5);
    expect(run.result.class).toBe("config_error");
    expect(run.result.error?.name).toBe("SandboxUnavailable");
    expect(run.result.error?.message).toMatch(
      /^--sandbox workspace-write cannot be set up: ripgrep \(rg\) not found, bubblewrap \(bwrap\) not installed, socat not installed: install bubblewrap, socat and ripgrep \(Debian\/Ubuntu: sudo apt-get install -y bubblewrap socat ripgrep\)$/,
    );
    expect(e2e.requestsFor(marker)).toEqual([]);
  }, 60_000);

  it("a kernel that refuses bubblewrap its namespaces: exit 5 saying what to enable, and the model sees no request", async () => {
    // bwrap as a kernel that refuses user namespaces leaves it (Ubuntu 24.04's AppArmor rule).
    const bin = mkdtempSync(join(e2e.home.root, "refusing-bwrap-"));
    writeFileSync(join(bin, "bwrap"), "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n", {
      mode: 0o755,
    });
    const marker = `refused-${secret().slice(0, 8)}`;
    const run = await e2e.run(["--sandbox", "workspace-write", `scenario:plain ${marker}`], {
      extraEnv: { PATH: `${bin}:${process.env.PATH}` },
    });
    expect(run.code).toBe(5);
    expect(run.result.error?.name).toBe("SandboxUnavailable");
    expect(run.result.error?.message).toBe(
      "--sandbox workspace-write cannot be set up: bubblewrap cannot create a sandbox here (bwrap: setting up uid map: Permission denied): user namespaces are refused here: on Ubuntu 24.04 (GitHub's ubuntu-latest) run `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; in a container, run it with --privileged or allow unshare",
    );
    expect(e2e.requestsFor(marker)).toEqual([]);
  }, 60_000);

  it("a namespace refused at run time, after the probe passed: exit 5 SandboxUnavailable, not opencode's failure", async () => {
    // bwrap that passes oc-exec's probe, then is refused when the turn's own sandbox is made.
    const bin = mkdtempSync(join(e2e.home.root, "late-bwrap-"));
    writeFileSync(
      join(bin, "bwrap"),
      `#!/bin/sh\ncase "$*" in *--unshare-user-try\\ true) exec ${JSON.stringify(realBwrap())} "$@";; esac\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n`,
      { mode: 0o755 },
    );
    const marker = `late-${secret().slice(0, 8)}`;
    const run = await e2e.run(["--sandbox", "workspace-write", `scenario:plain ${marker}`], {
      extraEnv: { PATH: `${bin}:${process.env.PATH}` },
    });
    expect(run.code).toBe(5);
    expect(run.result.class).toBe("config_error");
    expect(run.result.error).toMatchObject({
      name: "SandboxUnavailable",
      message:
        "the sandbox could not start opencode (bwrap: Creating new namespace failed: Operation not permitted): the kernel refused bubblewrap what it needs; `oc-exec doctor` says what to enable",
    });
    expect(e2e.requestsFor(marker)).toEqual([]);
  }, 60_000);

  it("in CI the sandbox must be available: CI installs what it needs (.ci/run)", () => {
    if (!process.env.CI) return;
    expect(unavailable).toBeNull();
  });
});
