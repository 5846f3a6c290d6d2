// The sandbox's relays without Nagle's algorithm (src/hosts/sandbox/relays.ts): the library is pointed at
// the package's socat wrapper, which adds `nodelay` to socat's TCP addresses and nothing else, and
// the library's proxy front end gets TCP_NODELAY on every connection it accepts, and no other
// server of the process does.
import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runtimeConfig } from "../../src/hosts/sandbox/policy.js";
import { noDelayOnAccept, socatWithoutDelay } from "../../src/hosts/sandbox/relays.js";

const layout = (socat?: string | null) =>
  runtimeConfig({
    spec: { mode: "workspace-write", writable: [], readable: [], allowHosts: [], passEnv: [] },
    workspace: "/work/repo",
    env: { HOME: "/home/ci" },
    tmp: "/tmp/s",
    hosts: ["api.anthropic.com:443"],
    masked: [],
    ca: null,
    exists: () => false,
    socat,
  });

describe("the socat the library runs its relays with", () => {
  it("is the package's wrapper, executable, and goes into the library's configuration", () => {
    const wrapper = socatWithoutDelay();
    expect(wrapper).toBe(join(process.cwd(), "bin", "socat-nodelay"));
    expect(() => accessSync(wrapper!, constants.X_OK)).not.toThrow();
    expect(layout(wrapper)).toHaveProperty("socatPath", wrapper);
    expect(layout(null)).not.toHaveProperty("socatPath");
    expect(layout()).not.toHaveProperty("socatPath");
  });

  it("adds nodelay to every TCP address and passes every other argument as is", () => {
    const dir = mkdtempSync(join(tmpdir(), "oc-exec-relay-test-"));
    try {
      // A socat that prints its arguments, one a line, found on PATH as the real one would be.
      writeFileSync(join(dir, "socat"), '#!/bin/sh\nfor a do printf "%s\\n" "$a"; done\n', { mode: 0o755 });
      const args = [
        "UNIX-LISTEN:/tmp/claude-http-1.sock,fork,reuseaddr",
        "TCP:localhost:41000,keepalive,keepidle=10,keepintvl=5,keepcnt=3",
        "TCP-LISTEN:3128,fork,reuseaddr",
        "TCP4:127.0.0.1:80",
        "TCP6-LISTEN:1080",
        "UNIX-CONNECT:/tmp/a b.sock",
        "-d",
        "",
      ];
      const run = spawnSync(socatWithoutDelay()!, args, { env: { PATH: `${dir}:/usr/bin:/bin` }, encoding: "utf8" });
      expect(run.status).toBe(0);
      expect(run.stdout.split("\n").slice(0, -1)).toEqual([
        "UNIX-LISTEN:/tmp/claude-http-1.sock,fork,reuseaddr",
        "TCP:localhost:41000,keepalive,keepidle=10,keepintvl=5,keepcnt=3,nodelay",
        "TCP-LISTEN:3128,fork,reuseaddr,nodelay",
        "TCP4:127.0.0.1:80,nodelay",
        "TCP6-LISTEN:1080,nodelay",
        "UNIX-CONNECT:/tmp/a b.sock",
        "-d",
        "",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the proxy front end's accepted connections", () => {
  const servers: Server[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    for (const s of servers.splice(0)) s.close();
  });

  /** A server that keeps each accepted socket; resolves with its port. */
  const listen = async (accepted: Socket[]) => {
    const server = createServer((socket) => accepted.push(socket));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as { port: number }).port;
  };
  const dial = async (port: number, accepted: Socket[]) => {
    const before = accepted.length;
    const client = connect(port, "127.0.0.1");
    while (accepted.length === before) await new Promise((r) => setTimeout(r, 5));
    client.destroy();
    return accepted.at(-1)!;
  };

  it("get TCP_NODELAY on the proxy's port only, until stopped", async () => {
    const calls: { socket: Socket; on: boolean | undefined }[] = [];
    const original = Socket.prototype.setNoDelay;
    vi.spyOn(Socket.prototype, "setNoDelay").mockImplementation(function (this: Socket, on?: boolean) {
      calls.push({ socket: this, on });
      return original.call(this, on);
    });
    const proxySide: Socket[] = [];
    const otherSide: Socket[] = [];
    const proxyPort = await listen(proxySide);
    const otherPort = await listen(otherSide);
    const stop = noDelayOnAccept(proxyPort);
    const first = await dial(proxyPort, proxySide);
    const other = await dial(otherPort, otherSide);
    stop();
    const afterStop = await dial(proxyPort, proxySide);
    expect(calls.filter((c) => c.socket === first)).toEqual([{ socket: first, on: true }]);
    expect(calls.filter((c) => c.socket === other)).toEqual([]);
    expect(calls.filter((c) => c.socket === afterStop)).toEqual([]);
  });
});
