// A real SSH server on loopback for the --ssh tests: the `ssh2` package's server with a throwaway
// host key and user key, running each command as a "remote" user of its own (its own HOME, its own
// opencode configuration, opencode on its PATH) the way sshd does: `sh -c COMMAND` in a session of
// its own, stdin closed when the channel or the connection goes. The client is the system's
// OpenSSH, given the keys and a known-hosts file of the test's own through --ssh-option.
import { execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import ssh2 from "ssh2";
import { locateOpencode } from "../../src/domain/opencode/locate.js";
import { type HermeticHome, makeHermeticHome } from "../../src/domain/scripted/hermetic-home.js";

export type SshServer = {
  port: number;
  /** 127.0.0.1:PORT */
  destination: string;
  /** The remote user's home, configuration and workspace. */
  remote: HermeticHome;
  /** The remote user's TMPDIR: opencode leaves its native libraries there unless oc-exec cleans up. */
  tmp: string;
  /** The --ssh and --ssh-option arguments that reach this server with the test's key. */
  args(extra?: { knownHosts?: string; identity?: string }): string[];
  /** Every command the server was asked to run, as sshd would see it (and `ps` would show it). */
  commands: string[];
  /** Cuts every connection at once, as a network failure would: no goodbye to either side. */
  dropConnections(): void;
  /** Processes started for the remote user that are still alive. */
  survivors(): number[];
  /** An ssh config file (OC_EXEC_SSH_CONFIG) in which `alias` is this server, with the test's key. */
  configFile(alias: string): string;
  /** A public key that is not this server's, in known-hosts form for its address. */
  foreignKnownHosts(): string;
  close(): Promise<void>;
};

function keygen(file: string): void {
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "oc-exec-test", "-f", file]);
}

export async function startSshServer(
  modelServerUrl: string,
  options: { opencodeOnPath?: boolean } = {},
): Promise<SshServer> {
  const remote = makeHermeticHome(modelServerUrl, "oc-exec-remote-");
  const keys = join(remote.root, "test-keys");
  mkdirSync(keys);
  keygen(join(keys, "host"));
  keygen(join(keys, "user"));
  keygen(join(keys, "other"));
  const bin = join(remote.root, "bin");
  mkdirSync(bin);
  const located = locateOpencode(null, process.env.PATH);
  if (!located.ok) throw new Error(`no opencode binary for the remote user: ${located.message}`);
  if (options.opencodeOnPath !== false) symlinkSync(located.binary.path, join(bin, "opencode"));
  const mark = randomUUID();
  const tmp = join(remote.root, "tmp");
  mkdirSync(tmp);
  const env: Record<string, string> = {
    ...remote.env,
    TMPDIR: tmp,
    PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
    OC_EXEC_TEST_REMOTE: mark,
  };
  const allowed = ssh2.utils.parseKey(readFileSync(join(keys, "user.pub")));
  if (allowed instanceof Error) throw allowed;
  const commands: string[] = [];
  const sockets = new Set<Socket>();
  const children = new Set<number>();

  const server = new ssh2.Server({ hostKeys: [readFileSync(join(keys, "host"))] }, (client) => {
    const sock = (client as unknown as { _sock: Socket })._sock;
    sockets.add(sock);
    sock.once("close", () => sockets.delete(sock));
    client.on("error", () => {});
    client.on("authentication", (ctx) => {
      if (
        ctx.method === "publickey" &&
        ctx.key.algo === allowed.type &&
        ctx.key.data.equals(allowed.getPublicSSH()) &&
        (!ctx.signature || allowed.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) === true)
      )
        return ctx.accept();
      ctx.reject(["publickey"]);
    });
    client.on("ready", () => {
      // Port forwarding (ssh -L): a channel to a port on the "remote" host's loopback.
      client.on("tcpip", (accept, reject, info) => {
        const upstream = connect(info.destPort, info.destIP);
        upstream.once("error", () => reject());
        upstream.once("connect", () => {
          const channel = accept();
          channel.on("error", () => upstream.destroy());
          upstream.pipe(channel).pipe(upstream);
          sockets.add(upstream);
          upstream.once("close", () => sockets.delete(upstream));
        });
      });
      client.on("session", (acceptSession) => {
        const session = acceptSession();
        session.on("exec", (accept, _reject, info) => {
          const channel = accept();
          commands.push(info.command);
          // sshd's session: a new session (setsid), the login directory, the user's environment.
          const child = spawn("/bin/sh", ["-c", info.command], { cwd: remote.root, env, detached: true });
          if (child.pid !== undefined) children.add(child.pid);
          channel.pipe(child.stdin);
          child.stdin.on("error", () => {});
          child.stdout.pipe(channel, { end: false });
          child.stderr.pipe(channel.stderr, { end: false });
          let open = true;
          channel.on("close", () => {
            open = false;
            // The connection or the channel went: the command's stdin ends, its output goes nowhere.
            child.stdin.end();
            child.stdout.destroy();
            child.stderr.destroy();
          });
          channel.on("error", () => {});
          child.on("close", (code, signal) => {
            if (child.pid !== undefined) children.delete(child.pid);
            if (!open) return;
            if (signal) channel.exit(signal.replace(/^SIG/, ""), false, "");
            else channel.exit(code ?? 0);
            channel.end();
          });
        });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  const destination = `127.0.0.1:${port}`;
  const knownHosts = join(keys, "known_hosts");
  writeFileSync(knownHosts, "");

  const survivors = () => {
    const found: number[] = [];
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/environ`, "utf8").includes(`OC_EXEC_TEST_REMOTE=${mark}`))
          found.push(Number(entry));
      } catch {
        // gone, or not ours to read
      }
    }
    return found;
  };

  return {
    port,
    destination,
    remote,
    tmp,
    commands,
    args: (extra = {}) => [
      "--ssh",
      destination,
      "--ssh-option",
      `IdentityFile=${extra.identity ?? join(keys, "user")}`,
      "--ssh-option",
      "IdentitiesOnly=yes",
      "--ssh-option",
      `UserKnownHostsFile=${extra.knownHosts ?? knownHosts}`,
      "--ssh-option",
      "GlobalKnownHostsFile=/dev/null",
    ],
    dropConnections() {
      for (const s of sockets) s.destroy();
    },
    survivors,
    configFile(alias) {
      const file = join(keys, `config-${alias}`);
      writeFileSync(
        file,
        [
          `Host ${alias}`,
          "  HostName 127.0.0.1",
          `  Port ${port}`,
          `  IdentityFile ${join(keys, "user")}`,
          "  IdentitiesOnly yes",
          `  UserKnownHostsFile ${knownHosts}`,
          "  GlobalKnownHostsFile /dev/null",
          "",
        ].join("\n"),
      );
      return file;
    },
    foreignKnownHosts() {
      const file = join(keys, "known_hosts_foreign");
      const other = readFileSync(join(keys, "other.pub"), "utf8").trim().split(" ").slice(0, 2).join(" ");
      writeFileSync(file, `[127.0.0.1]:${port} ${other}\n`);
      return file;
    },
    async close() {
      for (const s of sockets) s.destroy();
      for (const pid of [...children, ...survivors()]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(remote.root, { recursive: true, force: true });
    },
  };
}

/** A user key the server does not accept, made on demand. */
export function strangerKey(dir: string): string {
  const file = join(dir, `stranger-${randomUUID().slice(0, 8)}`);
  keygen(file);
  return file;
}
