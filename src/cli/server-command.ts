// `oc-exec server start|list|stop`: warm opencode servers for --attach, for scripts. start prints
// the URL and nothing else on stdout (url=$(oc-exec server start)); list prints one JSON object
// per running server; stop prints nothing on stdout. Messages go to stderr. Exit codes come from
// the one table: 0 done, 5 a problem the caller must fix (flags, binary, an unknown URL), 1 the
// server would not start, 124 it did not start in time.

import { rehearsalRefused } from "../app/rehearse.js";
import { startPlannedServer } from "../app/start-server.js";
import { EXIT_CODES } from "../contract/exit-codes.js";
import { ConfigError } from "../domain/outcome/errors.js";
import { printableLine } from "../domain/output/printable.js";
import { writeStdoutText } from "../domain/output/stdout-writer.js";
import { displayUrl } from "../hosts/server/client.js";
import { liveServers, type ServerStartProblem, stopServer } from "../hosts/server/managed.js";
import { supervise } from "../hosts/server/supervisor.js";
import { runBroker } from "../hosts/warm/acp-broker.js";
import type { SandboxSpec } from "../plan/sandbox-spec.js";
import { planServerStart } from "../plan/server-plan.js";
import { parseCount, parseDurationFlag } from "./duration.js";
import { FLAG_LABELS, SANDBOX_FLAGS, type TableFlags, tableOptions } from "./flag-table.js";
import { SERVER_IDLE_DEFAULT } from "./flags.js";
import type { CliIo } from "./io.js";

const _START_TIMEOUT_MS = 60_000;

/** `server start`'s fields: the table's flags it shares with a turn, and its own. */
type ServerFlags = TableFlags<"dir" | "opencode" | "model" | "ssh" | "sshOption" | (typeof SANDBOX_FLAGS)[number]> & {
  /** The server's own idle limit (not a turn's --idle-timeout): a duration, default SERVER_IDLE_DEFAULT. */
  idleTimeout?: string;
  port?: string;
  all?: boolean;
  sandbox?: string;
};

export async function serverCommand(
  command: "start" | "list" | "stop" | "supervise" | "broker",
  args: string[],
  flags: ServerFlags,
  io: CliIo,
): Promise<number> {
  // A message can name the workspace's files (a plugin it refuses): kept on its line (printable.ts).
  const say = (text: string) => io.stderr.write(`oc-exec server ${command}: ${printableLine(text)}\n`);
  try {
    switch (command) {
      case "start":
        return await start(flags, io, say);
      case "list":
        for (const server of liveServers(io.env)) {
          const { password: _secret, username: _user, ...shown } = server;
          writeStdoutText(`${JSON.stringify(shown)}\n`, io.stdout);
        }
        return EXIT_CODES.success;
      case "stop":
        return await stop(args, flags, io, say);
      case "supervise":
        return await supervise(io.env, (line) => writeStdoutText(line, io.stdout));
      case "broker":
        return await runBroker(io.env, (line) => writeStdoutText(line, io.stdout));
    }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    say(error.message);
    return EXIT_CODES.config_error;
  }
}

async function start(flags: ServerFlags, io: CliIo, say: (text: string) => void): Promise<number> {
  const refused = rehearsalRefused(io.env, "oc-exec server start");
  if (refused) throw new ConfigError(refused, "UsageError");
  const idle = flags.idleTimeout ?? SERVER_IDLE_DEFAULT;
  const plan = planServerStart(
    {
      ...tableOptions(flags, ["dir", "opencode", "model", "ssh", "sshOption", ...SANDBOX_FLAGS]),
      sandbox: flags.sandbox as SandboxSpec["mode"] | undefined,
      idleTimeoutMs: parseDurationFlag(idle, "--idle-timeout"),
      port: flags.port === undefined ? undefined : parseCount(flags.port, "--port"),
      env: io.env,
    },
    FLAG_LABELS,
  );
  const server = await startPlannedServer(plan, io.env);
  if ("problem" in server) return startFailed(server, say);
  // Under GitHub Actions, the password this run made is masked in the job's log from now on.
  if (io.env.GITHUB_ACTIONS === "true") io.stderr.write(`::add-mask::${server.password}\n`);
  writeStdoutText(`${server.url}\n`, io.stdout);
  const stops = `${plan.idleTimeoutMs > 0 ? `; it stops after ${idle} without a turn` : ""}; stop it with: oc-exec server stop ${server.url}`;
  say(
    plan.where === "ssh"
      ? `opencode serving ${server.dir} on ${plan.ssh.destination}, forwarded to ${server.url} (supervisor pid ${server.supervisor_pid})${stops}`
      : `opencode ${server.opencode.version ?? ""} serving ${plan.dir} at ${server.url} (pid ${server.pid})${server.sandbox ? `, in a ${server.sandbox.info.mode} sandbox reaching ${server.sandbox.info.allowed_hosts.join(", ") || "no host"}` : ""}${stops}`,
  );
  return EXIT_CODES.success;
}

/** A server that did not start: refused before it started is the caller's to fix (exit 5), else 1 or 124. */
function startFailed({ problem }: ServerStartProblem, say: (text: string) => void): number {
  if (problem.kind === "config") throw new ConfigError(problem.message, problem.name);
  say(problem.message);
  return problem.kind === "timeout" ? EXIT_CODES.timeout : EXIT_CODES.agent_error;
}

async function stop(urls: string[], flags: ServerFlags, io: CliIo, say: (text: string) => void): Promise<number> {
  if (urls.length === 0 && !flags.all) throw new ConfigError("name the URLs to stop, or pass --all");
  if (urls.length > 0 && flags.all) throw new ConfigError("give URLs or --all, not both");
  const servers = liveServers(io.env);
  const wanted = flags.all
    ? servers
    : urls.map((u) => {
        let key: string;
        try {
          key = displayUrl(new URL(u));
        } catch {
          throw new ConfigError(`${JSON.stringify(u)} is not a URL`);
        }
        const found = servers.find((s) => s.url === key);
        if (!found)
          throw new ConfigError(`no server oc-exec started is running at ${key} (oc-exec server list shows them)`);
        return found;
      });
  await Promise.all(wanted.map((server) => stopServer(io.env, server)));
  for (const server of wanted) say(`stopped ${server.url} (pid ${server.pid})`);
  return EXIT_CODES.success;
}
