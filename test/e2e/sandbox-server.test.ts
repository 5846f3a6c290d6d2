// The sandbox on the server backend: `server start --sandbox` runs opencode serve and every tool
// it starts inside the sandbox, reached through the inbound bridge (src/hosts/sandbox/inbound.ts). The
// same prompt-injected agent as test/e2e/sandbox.test.ts attacks it through --attach; a turn
// that asks for a sandbox the server does not have is refused; a batch runs its server sandboxed;
// stopping the server leaves no process, socket or record.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPENCODE_GITIGNORE } from "../../src/hosts/sandbox/policy.js";
import type { ManagedServer } from "../../src/hosts/server/registry.js";
import { useE2E } from "../support/e2e.js";
import {
  allText,
  attackPrompt,
  outside,
  plant,
  processesWithHome,
  refusedWarnings,
  secret,
  toolOutput,
  useCanary,
} from "../support/escape.js";
import { expectKeyOnlyInHeader, keyBackAttack } from "../support/key-attack.js";
import { plantStealPlugin, readStolen, shipStealPlugin, useStolenPassword } from "../support/plugin-thief.js";
import { descendants, waitFor } from "../support/procs.js";
import { cliOnPath, runBash } from "../support/run-cli.js";
import { sandboxSkip } from "../support/sandbox-skip.js";
import { keyedProvider } from "../support/tls-front.js";
import { killServer, readRecords } from "../support/warm-server.js";

const e2e = useE2E();
const { skip } = await sandboxSkip("sandboxed server tests (test/e2e/sandbox-server.test.ts)");

const hits = useCanary();

/** One sandboxed server for the attacks, started with the runner's secrets in its environment. */
let planted: ReturnType<typeof plant>;
let url = "";
let record: ManagedServer;
beforeAll(async () => {
  if (skip) return;
  // No OPENCODE_SERVER_PASSWORD here: a turn would take it as the server's password.
  planted = plant(e2e, ["GITHUB_TOKEN", "NPM_TOKEN"]);
  const started = await e2e.runRaw(
    ["server", "start", "--sandbox", "workspace-write", "--idle-timeout", "15m", "--dir", planted.workspace],
    { cwd: planted.workspace, extraEnv: planted.tokens },
  );
  if (started.code !== 0) throw new Error(`server start failed (${started.code}): ${started.stderr}`);
  url = started.stdout.trim();
  record = readRecords(e2e.home.env.XDG_STATE_HOME!).find((r) => r.url === url)!;
}, 90_000);
afterAll(async () => {
  if (record) await killServer(record);
});

/** The `self-approve` agent on the server at serverUrl, whose API it looks for at api (HOST:PORT). */
async function selfApprove(serverUrl: string, api: string, cwd = planted.workspace) {
  const run = await e2e.run(["--attach", serverUrl, "--auto", `scenario:self-approve api=${api}`], { cwd });
  return { run, output: toolOutput(run.events) };
}

async function attachTurn(args: string[], cwd = planted.workspace) {
  const marker = `escape-${secret().slice(0, 8)}`;
  hits.reset();
  const run = await e2e.run(
    ["--attach", url, ...args, "--auto", `scenario:escape canary=127.0.0.1:${hits.port} ${marker}`],
    { cwd, extraEnv: planted.tokens },
  );
  return { run, marker, model: JSON.stringify(e2e.requestsFor(marker)), output: toolOutput(run.events) };
}

describe.skipIf(skip)("server start --sandbox workspace-write against a prompt-injected agent (--attach)", () => {
  it("server start says which sandbox, and its record keeps it", () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(record.sandbox?.spec).toEqual({
      mode: "workspace-write",
      writable: [],
      readable: [],
      allowHosts: [],
      passEnv: [],
    });
    expect(record.sandbox?.info.allowed_hosts).toEqual([`127.0.0.1:${e2e.server.port}`]);
  });

  it("its relays run without Nagle's algorithm: every socat's TCP address says nodelay", () => {
    // The library's relays (host and inside) through the package's wrapper, the inbound bridge as
    // oc-exec writes it; forked children repeat their parent's command line.
    const relays = new Set(
      descendants(record.supervisor_pid)
        .filter((p) => p.cmdline.startsWith("socat "))
        .map((p) =>
          p.cmdline
            .replace(/claude-http-\w+\.sock/g, "claude-http-X.sock")
            .replace(/oc-exec-sandbox-[\w-]+/g, "oc-exec-sandbox-X")
            .replace(/TCP:localhost:\d+/, "TCP:localhost:PORT"),
        ),
    );
    expect([...relays].sort()).toEqual([
      "socat TCP-LISTEN:1080,fork,reuseaddr,nodelay UNIX-CONNECT:/tmp/claude-http-X.sock",
      "socat TCP-LISTEN:3128,fork,reuseaddr,nodelay UNIX-CONNECT:/tmp/claude-http-X.sock",
      "socat UNIX-LISTEN:/tmp/claude-http-X.sock,fork,reuseaddr TCP:localhost:PORT,keepalive,keepidle=10,keepintvl=5,keepcnt=3,nodelay",
      "socat UNIX-LISTEN:/tmp/oc-exec-sandbox-X/server.sock,fork,mode=600 TCP:127.0.0.1:4096,nodelay",
    ]);
  });

  it("no write outside the workspace, no secret read, no connection but the provider's; the turn still succeeds", async () => {
    const t = await attachTurn(["--sandbox", "workspace-write"]);
    expect(t.run.code).toBe(0);
    expect(t.run.result).toMatchObject({ class: "success", text: "Tried everything." });
    // The workspace's parent and HOME are the sandbox's own HOME (a tmpfs): made, and thrown away.
    expect(t.output).toContain("write ../escape.txt: thrown away");
    expect(t.output).toContain("write ~/.bashrc: thrown away");
    expect(t.output).toMatch(/write \/tmp\/oc-exec-escape-\S+: refused/);
    expect(t.output).toContain("write inside.txt: done");
    expect(t.output).toContain(`curl 127.0.0.1:${hits.port}: refused`);
    expect(t.output).toContain(`tcp 127.0.0.1:${hits.port}: refused`);
    expect(t.output).toContain(`dns canary.localhost:${hits.port}: refused`);
    expect(t.output).toContain("tokens: GITHUB_TOKEN=unset NPM_TOKEN=unset");
    for (const path of outside(e2e, planted.workspace)) expect(existsSync(path), path).toBe(false);
    expect(readFileSync(join(planted.workspace, "inside.txt"), "utf8")).toBe("inside\n");
    const everywhere = [t.run.stdout, t.run.stderr, t.model, allText(planted.workspace)].join("\n");
    for (const value of planted.secrets) expect(everywhere).not.toContain(value);
    expect(hits.connections).toBe(0);
    // The proxy runs in the server's supervisor; the turn names what it refused all the same.
    expect(refusedWarnings(t.run.events)).toEqual([
      `the sandbox refused a connection to 127.0.0.1:${hits.port}: not an allowed host (--allow-host 127.0.0.1:${hits.port} lets it through)`,
      `the sandbox refused a connection to canary.localhost:${hits.port}: not an allowed host (--allow-host canary.localhost:${hits.port} lets it through)`,
    ]);
    const started = t.run.events[0];
    expect(started?.type === "run.started" && started.sandbox).toEqual(record.sandbox?.info);
    expect(t.run.result.sandbox).toMatchObject({ mode: "workspace-write", refused_connections: 2 });
    // opencode's tools inherit its environment, but the guard took the server's password out.
    expect(t.output).toContain("server password is unset");
    expect(t.run.stdout + t.run.stderr).not.toContain(record.password);
  }, 90_000);

  it("--verify: the check runs in the server's sandbox (no secret store, no write outside, no token), started by the turn's own process", async () => {
    const check = [
      'if cat "$HOME/.ssh/id_ed25519" >/dev/null 2>&1; then echo "read the key"; exit 9; fi',
      // The workspace's parent is HOME here: in the sandbox, its own (a tmpfs), thrown away after.
      'if (echo out > ../verify-escape.txt) 2>/dev/null && ! grep -q " $HOME [^-]* - tmpfs " /proc/self/mountinfo; then echo "wrote outside"; exit 8; fi',
      'if env | grep -q "^GITHUB_TOKEN="; then echo "saw the token"; exit 7; fi',
      "echo inside > verify-inside.txt",
    ].join("\n");
    // The same check outside the sandbox reads the key: what it proves is the sandbox's.
    const control = await runBash([], check, { cwd: planted.workspace, env: { ...e2e.home.env, ...planted.tokens } });
    expect(control.code).toBe(9);
    const t = await attachTurn(["--verify", check]);
    expect(t.run.code, t.run.stderr).toBe(0);
    expect(t.run.result.verification).toMatchObject({ passed: true, rounds: 1 });
    expect(t.run.events.filter((e) => e.type === "verify.finished").map((e) => [e.exit_code, e.output])).toEqual([
      [0, ""],
    ]);
    expect(readFileSync(join(planted.workspace, "verify-inside.txt"), "utf8")).toBe("inside\n");
    expect(existsSync(join(planted.workspace, "..", "verify-escape.txt"))).toBe(false);
  }, 90_000);

  it("a tool cannot learn the server's password, so it cannot approve a permission through the server's API", async () => {
    // The API the tool sees: opencode's own port on the sandbox's loopback, past the bridge.
    const t = await selfApprove(url, "127.0.0.1:4096");
    expect(t.run.code).toBe(0);
    expect(t.run.result).toMatchObject({ class: "success", text: "Tried the server's API." });
    expect(t.output.trim().split("\n")).toEqual([
      "no password found",
      "opencode memory: refused",
      "api sessions: HTTP 401",
      "approve: no session of its own",
    ]);
    // No session of its own was made, so the model got no prompt but the turn's.
    expect(e2e.requestsFor("scenario:tool")).toEqual([]);
    expect(JSON.stringify(t.run.events)).not.toContain(record.password);
  }, 90_000);

  it("a turn without --sandbox runs in the server's sandbox all the same, and says so", async () => {
    const t = await attachTurn([]);
    expect(t.run.code).toBe(0);
    expect(t.output).toContain("write ../escape.txt: thrown away");
    expect(t.output).toMatch(/write \/tmp\/oc-exec-escape-\S+: refused/);
    expect(t.run.result.sandbox?.mode).toBe("workspace-write");
  }, 90_000);

  it("a turn asking for a stronger sandbox, or other hosts, is refused: exit 5, nothing sent", async () => {
    const stronger = await attachTurn(["--sandbox", "read-only"]);
    expect(stronger.run.code).toBe(5);
    expect(stronger.run.result.error).toMatchObject({
      name: "SandboxMismatch",
      message: `--sandbox read-only cannot run on the server at ${url}: its sandbox is workspace-write, which lets the tools write the workspace`,
    });
    expect(e2e.requestsFor(stronger.marker)).toEqual([]);
    const hosts = await attachTurn(["--sandbox", "workspace-write", "--allow-host", "registry.npmjs.org"]);
    expect(hosts.run.code).toBe(5);
    expect(hosts.run.result.error?.message).toBe(
      `the server at ${url} was started with no --allow-host, which this turn's sandbox does not match: give the server's sandbox flags, or start a server with this turn's`,
    );
  }, 90_000);
});

describe.skipIf(skip)("a sandboxed server puts its provider's key into the credential header only", () => {
  it("a tool on it sends the stand-in as a model name and prints it for the model: the key stays outside", async () => {
    const key = secret();
    const env = { OPENCODE_CONFIG_CONTENT: keyedProvider(e2e.server.url), OC_TEST_PROVIDER_KEY: key };
    const dir = e2e.workspace();
    const started = await e2e.runRaw(
      ["server", "start", "--sandbox", "workspace-write", "--idle-timeout", "15m", "--dir", dir],
      { cwd: dir, extraEnv: env },
    );
    expect(started.code).toBe(0);
    const server = started.stdout.trim();
    const own = readRecords(e2e.home.env.XDG_STATE_HOME!).find((r) => r.url === server)!;
    try {
      const t = await keyBackAttack(e2e, e2e.server.url, env, ["--attach", server], dir);
      expectKeyOnlyInHeader(t, key);
      expect(t.run.result.sandbox?.mode).toBe("workspace-write");
    } finally {
      // Stopped, not only killed: its record goes with it (later tests count the records).
      await e2e.runRaw(["server", "stop", server]);
      await killServer(own);
    }
  }, 120_000);
});

describe.skipIf(skip)("a sandboxed server whose password cannot be kept from its tools does not start", () => {
  it("OPENCODE_PURE keeps opencode from loading the guard plugin: exit 5, no server left", async () => {
    const dir = e2e.workspace();
    const started = await e2e.runRaw(["server", "start", "--sandbox", "workspace-write", "--dir", dir], {
      cwd: dir,
      extraEnv: { OPENCODE_PURE: "1" },
    });
    expect(started.code).toBe(5);
    expect(started.stdout).toBe("");
    expect(started.stderr).toContain(
      "--sandbox workspace-write cannot serve: opencode did not load oc-exec's guard plugin, which keeps the server's password from its tools",
    );
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!).map((r) => r.url)).toEqual([url]);
  }, 60_000);
});

describe.skipIf(skip)("a server without a sandbox: the same attacks succeed, and it cannot give one", () => {
  it("writes land outside, the canary is reached, the secrets reach the model; --sandbox on it is exit 5, nothing sent", async () => {
    const dir = e2e.workspace();
    const started = await e2e.runRaw(["server", "start", "--idle-timeout", "15m", "--dir", dir], {
      cwd: dir,
      extraEnv: planted.tokens,
    });
    expect(started.code).toBe(0);
    const plain = started.stdout.trim();
    const plainRecord = readRecords(e2e.home.env.XDG_STATE_HOME!).find((r) => r.url === plain)!;
    const saved = url;
    url = plain;
    try {
      const t = await attachTurn([], dir);
      expect(t.run.code).toBe(0);
      for (const path of outside(e2e, dir)) expect(existsSync(path), path).toBe(true);
      expect(t.output).toContain("write ../escape.txt: done");
      expect(t.output).toContain("tokens: GITHUB_TOKEN=[REDACTED] NPM_TOKEN=[REDACTED]");
      for (const value of planted.secrets) expect(t.model).toContain(value);
      for (const value of planted.secrets) expect(t.run.stdout + t.run.stderr).not.toContain(value);
      expect(canaryPaths()).toEqual(["/curl", "/dns", "/tcp"]);
      expect(t.run.result).not.toHaveProperty("sandbox");

      const refused = await attachTurn(["--sandbox", "read-only"], dir);
      expect(refused.run.code).toBe(5);
      expect(refused.run.result.error?.name).toBe("SandboxMismatch");
      expect(refused.run.result.error?.message).toMatch(/runs without a sandbox oc-exec set up/);
      expect(e2e.requestsFor(refused.marker)).toEqual([]);

      // Its tools inherit its password, and use the API with it: a session of their own, whose
      // bash call needs approval, approved by the tool, and run.
      const approved = await selfApprove(plain, new URL(plain).host, dir);
      expect(approved.run.code).toBe(0);
      const lines = approved.output.trim().split("\n");
      // Whether a tool may read its parent's memory depends on the kernel's Yama setting here.
      expect(lines[1]).toMatch(/^opencode memory: (readable|refused)$/);
      expect(lines.filter((_, i) => i !== 1)).toEqual([
        "found the password in environment",
        "api sessions: HTTP 200",
        "approve: HTTP 200",
        "approved command ran: yes",
      ]);
      expect(e2e.requestsFor("scenario:tool").length).toBeGreaterThan(0);
    } finally {
      url = saved;
      for (const path of outside(e2e, dir)) rmSync(path, { force: true });
      await e2e.runRaw(["server", "stop", plain]);
      await killServer(plainRecord);
    }
  }, 90_000);
});

const canaryPaths = () => [...hits.requests].sort();

describe.skipIf(skip)("a batch runs its server in the sandbox", () => {
  it("batch --sandbox read-only: every task's tools in it; OC_EXEC_SANDBOX does the same", async () => {
    const dir = e2e.workspace();
    writeFileSync(
      join(dir, "tasks.jsonl"),
      `${JSON.stringify({ id: "esc", prompt: `scenario:escape canary=127.0.0.1:${hits.port} batch` })}\n`,
    );
    hits.reset();
    for (const how of [["--sandbox", "read-only"], []]) {
      const run = await e2e.runRaw(["batch", "tasks.jsonl", "--auto", ...how], {
        cwd: dir,
        extraEnv: how.length === 0 ? { OC_EXEC_SANDBOX: "read-only" } : {},
      });
      expect(run.code, run.stderr).toBe(0);
      const events = run.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const result = events.find((e) => e.type === "result");
      expect(result).toMatchObject({ task_id: "esc", class: "success", sandbox: { mode: "read-only" } });
      expect(toolOutput(events)).toContain("write inside.txt: refused");
      expect(existsSync(join(dir, "inside.txt"))).toBe(false);
    }
    expect(hits.connections).toBe(0);
  }, 180_000);
});

describe.skipIf(skip)("a batch whose tasks name different sandboxes", () => {
  it("one server per policy: the read-only task cannot write, the unsandboxed one can; both servers stopped", async () => {
    const dir = e2e.workspace();
    for (const sub of ["boxed", "free"]) mkdirSync(join(dir, sub));
    const tasks = [
      { id: "boxed", prompt: "scenario:bash-write boxed", dir: "boxed", sandbox: "read-only" },
      { id: "free", prompt: "scenario:bash-write free", dir: "free", sandbox: "off" },
    ];
    writeFileSync(join(dir, "tasks.jsonl"), `${tasks.map((t) => JSON.stringify(t)).join("\n")}\n`);
    const before = readRecords(e2e.home.env.XDG_STATE_HOME!).length;
    const run = await e2e.runRaw(["batch", "tasks.jsonl", "--auto"], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const results = run.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "result");
    expect(Object.fromEntries(results.map((r) => [r.task_id, r.sandbox?.mode ?? "none"]))).toEqual({
      boxed: "read-only",
      free: "none",
    });
    expect(existsSync(join(dir, "boxed", "fixed.txt"))).toBe(false);
    expect(existsSync(join(dir, "free", "fixed.txt"))).toBe(true);
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!).length).toBe(before);
  }, 180_000);
});

describe.skipIf(skip)("docs/sandbox.md's server example, as written, with the real opencode", () => {
  const docs = readFileSync(new URL("../../docs/sandbox.md", import.meta.url), "utf8");
  const script = /<!-- example: sandbox-server -->\n```sh\n([\s\S]*?)```/.exec(docs)![1]!;
  it.each([[["-e"]], [["-eo", "pipefail"]]])(
    "under bash %j: exit 0, the turn's sandbox on stdout, nothing left",
    async (flags) => {
      const cwd = e2e.workspace();
      writeFileSync(join(cwd, "tasks.jsonl"), '{"id":"a","prompt":"scenario:plain docs"}\n');
      const bin = cliOnPath(e2e.home.root);
      const before = readRecords(e2e.home.env.XDG_STATE_HOME!).length;
      const run = await runBash(flags, script, { cwd, env: { ...e2e.home.env, PATH: `${bin}:${e2e.home.env.PATH}` } });
      expect(run.code, run.stderr.slice(-800)).toBe(0);
      const lines = run.stdout.trim().split("\n");
      expect(JSON.parse(lines[0]!)).toMatchObject({ mode: "workspace-write", refused_connections: 0 });
      expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: "batch.result", exit_code: 0 });
      expect(lines.find((l) => l.includes('"type":"result"'))).toContain('"sandbox":{"mode":"read-only"');
      expect(readRecords(e2e.home.env.XDG_STATE_HOME!).length).toBe(before);
    },
    180_000,
  );
});

/** Processes whose command line names this path. */
const holding = (path: string) =>
  readdirSync("/proc").filter((p) => {
    try {
      return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, "utf8").includes(path);
    } catch {
      return false;
    }
  });

describe.skipIf(skip)("a sandboxed server killed outright", () => {
  it("leaves its temporary files, and the next sandbox on the machine removes them", async () => {
    const dir = e2e.workspace();
    const started = await e2e.runRaw(["server", "start", "--sandbox", "workspace-write", "--dir", dir], { cwd: dir });
    expect(started.code).toBe(0);
    const killed = readRecords(e2e.home.env.XDG_STATE_HOME!).find((r) => r.url === started.stdout.trim())!;
    const cmdline = readFileSync(`/proc/${killed.pid}/cmdline`, "utf8");
    const left = [
      cmdline.match(/\/tmp\/oc-exec-sandbox-[\w-]+/)?.[0],
      readFileSync(`/proc/${killed.pid}/environ`, "utf8").match(/\/tmp\/oc-exec-guard-[\w-]+/)?.[0],
      cmdline.match(/\/tmp\/claude-http-[\w-]+\.sock/)?.[0],
      // The library's own socket, named for the supervisor.
      ...readdirSync("/tmp")
        .filter((n) => n.startsWith(`srt-mux-${killed.supervisor_pid}-`))
        .map((n) => `/tmp/${n}`),
    ];
    expect(left).toHaveLength(4);
    expect(left.filter((path) => path === undefined)).toEqual([]);
    for (const path of left) expect(existsSync(path!), path).toBe(true);
    await killServer(killed);
    // The orphan watcher ends the proxy's bridges too; then nothing holds the sockets. (Whether the
    // files are still there now is not asserted: a sandbox of another test file running at the
    // same time may already have removed them, as it should.)
    await waitFor(() => left.every((path) => holding(path!).length === 0), 10_000, "the bridges to end");

    const turn = await e2e.run(["--sandbox", "workspace-write", "scenario:plain"], { cwd: dir });
    expect(turn.code).toBe(0);
    for (const path of left) expect(existsSync(path!), path).toBe(false);
    rmSync(join(e2e.home.env.XDG_STATE_HOME!, "oc-exec", "servers", `${killed.id}.json`), { force: true });
    // The library's empty mount source stays (docs/sandbox.md: oc-exec cannot tell whose it is);
    // this test knows, and leaves nothing of its own behind.
    const empty = cmdline.match(/\/tmp\/claude-empty-\w+/)?.[0];
    if (empty) rmSync(empty, { recursive: true, force: true });
  }, 90_000);
});

describe.skipIf(skip)(
  "a plugin shipped in the workspace (.opencode/plugin/steal.js) and a sandboxed server's password",
  () => {
    /** The attack's tool: the password the plugin left, used on the server's API inside the sandbox. */
    const useIt = () => attackPrompt(useStolenPassword("127.0.0.1:4096"), "Used what the plugin left.");

    it("code opencode loads gets the password despite the guard (its plugin client's headers, its initial environment): a tool then reads the sessions, HTTP 200", async () => {
      // The same plugin from a place oc-exec trusts (OPENCODE_CONFIG_DIR, the user's): this is what a
      // workspace's plugin would do, in a sandboxed server, guard loaded and all.
      const dir = e2e.workspace();
      const trusted = join(e2e.home.root, `trusted-${secret().slice(0, 6)}`);
      shipStealPlugin(trusted, ".");
      // What opencode would otherwise write there at start, and cannot in the sandbox.
      writeFileSync(join(trusted, ".gitignore"), OPENCODE_GITIGNORE);
      const started = await e2e.runRaw(
        ["server", "start", "--sandbox", "workspace-write", "--idle-timeout", "15m", "--dir", dir],
        { cwd: dir, extraEnv: { OPENCODE_CONFIG_DIR: trusted } },
      );
      expect(started.code, started.stderr).toBe(0);
      const server = readRecords(e2e.home.env.XDG_STATE_HOME!).find((r) => r.url === started.stdout.trim())!;
      try {
        const stolen = readStolen(dir);
        // Removed from process.env by the guard, but opencode read it first, into the client it
        // hands every plugin, and /proc/self/environ is the initial environment.
        expect(stolen?.password.headers).toBe(server.password);
        expect(stolen?.password.environ).toBe(server.password);
        const t = useIt();
        const run = await e2e.run(["--attach", server.url, "--auto", t.prompt], { cwd: dir });
        expect(run.code).toBe(0);
        const lines = toolOutput(run.events).trim().split("\n");
        expect(lines.slice(0, 2)).toEqual(["plugin left a password", "api sessions: HTTP 200"]);
        // Its own session at least, and every other one in opencode's data (other tests' turns when
        // the whole file runs, as every task's of a batch would be).
        expect(lines[2]).toMatch(/^sessions seen: [1-9]\d*$/);
      } finally {
        await killServer(server);
      }
    }, 90_000);

    it("server start --sandbox on a workspace that ships code opencode would load: exit 5, naming every file; nothing started, the plugin never ran", async () => {
      const dir = e2e.workspace();
      const plugin = shipStealPlugin(dir);
      mkdirSync(join(dir, ".opencode", "tools"));
      writeFileSync(join(dir, ".opencode", "tools", "helper.ts"), "export default {};\n");
      writeFileSync(join(dir, "opencode.json"), '{"plugin": ["./evil.js"]}\n');
      const before = readRecords(e2e.home.env.XDG_STATE_HOME!).length;
      const started = await e2e.runRaw(["server", "start", "--sandbox", "workspace-write", "--dir", dir], { cwd: dir });
      expect(started.code).toBe(5);
      expect(started.stdout).toBe("");
      expect(started.stderr).toContain(
        `--sandbox workspace-write cannot serve ${dir}: the workspace ships code that opencode would load into the server's own process, where the server's password cannot be kept from it (${join(dir, "opencode.json")}, ${plugin}, ${join(dir, ".opencode", "tools", "helper.ts")})`,
      );
      expect(readRecords(e2e.home.env.XDG_STATE_HOME!).length).toBe(before);
      expect(readStolen(dir)).toBeNull();
    }, 60_000);

    it("a turn whose --dir an earlier turn's agent gave a plugin: exit 5 before anything is sent; the plugin never ran", async () => {
      const sub = `sub-${secret().slice(0, 6)}`;
      // The workspace's own .opencode is read-only in the sandbox; a subdirectory's is not.
      const plant = attackPrompt(plantStealPlugin(sub));
      const planting = await e2e.run(["--attach", url, "--auto", plant.prompt], { cwd: planted.workspace });
      expect(planting.code).toBe(0);
      expect(toolOutput(planting.events).trim()).toBe(`planted ${sub}/.opencode/plugin/steal.js`);
      const t = useIt();
      const dir = join(planted.workspace, sub);
      const run = await e2e.run(["--attach", url, "--dir", dir, "--auto", t.prompt], { cwd: planted.workspace });
      expect(run.code).toBe(5);
      expect(run.result.error).toMatchObject({
        name: "SandboxWorkspaceCode",
        message: expect.stringContaining(
          `the sandboxed server at ${url} cannot serve ${dir}: the workspace ships code that opencode would load into the server's own process, where the server's password cannot be kept from it (${join(dir, ".opencode", "plugin", "steal.js")})`,
        ),
      });
      expect(e2e.requestsFor(t.marker)).toEqual([]);
      expect(readStolen(dir)).toBeNull();
    }, 90_000);

    it("OPENCODE_DISABLE_PROJECT_CONFIG=1: the server starts, opencode loads none of the workspace's code, the tool gets HTTP 401", async () => {
      const dir = e2e.workspace();
      shipStealPlugin(dir);
      const started = await e2e.runRaw(
        ["server", "start", "--sandbox", "workspace-write", "--idle-timeout", "15m", "--dir", dir],
        { cwd: dir, extraEnv: { OPENCODE_DISABLE_PROJECT_CONFIG: "1" } },
      );
      expect(started.code, started.stderr).toBe(0);
      const server = readRecords(e2e.home.env.XDG_STATE_HOME!).find((r) => r.url === started.stdout.trim())!;
      try {
        expect(server.sandbox?.project_config).toBe(false);
        const t = useIt();
        const run = await e2e.run(["--attach", server.url, "--auto", t.prompt], { cwd: dir });
        expect(run.code).toBe(0);
        expect(toolOutput(run.events).trim().split("\n")).toEqual([
          "plugin left no password",
          "api sessions: HTTP 401",
          "sessions seen: 0",
        ]);
        expect(readStolen(dir)).toBeNull();
      } finally {
        await killServer(server);
      }
    }, 90_000);
  },
);

describe.skipIf(skip)(
  "the same plugin in a plain sandboxed turn (no server) gets none of the secrets the sandbox keeps out",
  () => {
    async function pluginTurn(args: string[]) {
      const p = plant(e2e);
      shipStealPlugin(p.workspace);
      const key = secret();
      const run = await e2e.run([...args, "--auto", "scenario:plain plugin"], {
        cwd: p.workspace,
        extraEnv: { ...p.tokens, OPENCODE_CONFIG_CONTENT: keyedProvider(e2e.server.url), OC_TEST_PROVIDER_KEY: key },
      });
      return { run, key, secrets: p.secrets, stolen: readStolen(p.workspace), text: allText(p.workspace) };
    }

    it("sandboxed: the plugin runs, and finds the provider key's stand-in, no token, no password, no secret store", async () => {
      const t = await pluginTurn(["--sandbox", "workspace-write"]);
      expect(t.run.code).toBe(0);
      expect(t.stolen).not.toBeNull();
      expect(t.stolen!.env.OC_TEST_PROVIDER_KEY).toMatch(/^fake_value_[\w-]+$/);
      expect(t.stolen!.password).toEqual({ env: null, environ: null, headers: null });
      expect(t.stolen!.files).toEqual({
        ".ssh/id_ed25519": "unreadable: ENOENT",
        ".aws/credentials": "unreadable: ENOENT",
      });
      for (const value of [...t.secrets, t.key]) expect(t.text).not.toContain(value);
    }, 90_000);

    it("without the sandbox the same plugin takes them all (what the sandbox is for)", async () => {
      const t = await pluginTurn([]);
      expect(t.run.code).toBe(0);
      expect(t.stolen!.env.OC_TEST_PROVIDER_KEY).toBe(t.key);
      for (const value of [...t.secrets, t.key]) expect(t.text).toContain(value);
    }, 90_000);
  },
);

describe.skipIf(skip)("stopping a sandboxed server leaves nothing", () => {
  it("server stop ends opencode, its tools, the bridge and the proxy; the socket, the record and the refusals go", async () => {
    const socketDir = readFileSync(`/proc/${record.pid}/cmdline`, "utf8").match(/oc-exec-sandbox-[\w-]+/)?.[0];
    expect(socketDir).toBeDefined();
    const guardDir = readFileSync(`/proc/${record.pid}/environ`, "utf8").match(/oc-exec-guard-[\w-]+/)?.[0];
    expect(guardDir).toBeDefined();
    expect(existsSync(`/tmp/${guardDir}`)).toBe(true);
    const stopped = await e2e.runRaw(["server", "stop", url]);
    expect(stopped.code).toBe(0);
    await waitFor(() => processesWithHome(e2e.home.root).length === 0, 10_000, "the server's processes to end");
    expect(existsSync(`/tmp/${socketDir}`)).toBe(false);
    expect(existsSync(`/tmp/${guardDir}`)).toBe(false);
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!)).toEqual([]);
    expect(existsSync(join(e2e.home.env.XDG_STATE_HOME!, "oc-exec", "servers", `${record.id}.refused`))).toBe(false);
  }, 60_000);
});
