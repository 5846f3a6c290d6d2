// A sandboxed server's password kept from its own tools. opencode serve needs the password to check
// every request, and everything it starts (the bash tool's commands, language servers, formatters)
// runs in the same sandbox, as the same user, on the same loopback as its API. A tool that learns
// the password can call that API: approve its own permission requests, read the other sessions.
// Three ways to learn it are closed here:
//   - the environment the tools inherit: a plugin oc-exec writes (below) deletes the variable from
//     opencode's environment when opencode loads it, before any tool runs;
//   - /proc/PID/environ and /proc/PID/mem of opencode (readable by any process of the same user
//     that may trace it, and no Yama rule is assumed): the same plugin marks opencode non-dumpable
//     (prctl PR_SET_DUMPABLE 0), which makes both unreadable to processes without CAP_SYS_PTRACE;
//   - the processes around opencode inside the sandbox (its shells, the bridges): the password
//     never is in their environment. It reaches opencode through its stdin, read by the last shell
//     just before it becomes opencode.
// The plugin reports on opencode's stdout; the supervisor reads that report before the server is
// ready and refuses to serve (fails closed) when the password could not be protected.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { isObj } from "../../domain/opencode/config-content.js";
import { ownTempDir } from "../../sys/own-temp.js";

/** What the plugin found, in the line it prints. */
export type GuardReport = {
  /** The password was in opencode's environment, and is no longer. */
  removed: boolean;
  /** opencode is non-dumpable (Linux), or cannot be made so here. */
  sealed: "yes" | "no" | "unsupported";
  /** What opencode starts gets no capability (none may trace opencode, dumpable or not). */
  capless: boolean;
  pid: number;
};

const REPORT_PREFIX = "oc-exec-guard ";

// The plugin's source. It runs inside opencode (Bun), at its first instance's start, before any
// tool; a module's top level runs once however many instances load it.
const PLUGIN_SOURCE = `// Written by oc-exec for a sandboxed opencode serve: keeps the server's password from its tools.
import { readFileSync, writeSync } from "node:fs";
const NAME = "OPENCODE_SERVER_PASSWORD";
const removed = typeof process.env[NAME] === "string" && process.env[NAME] !== "";
delete process.env[NAME];
let sealed = "unsupported";
let capless = process.platform !== "linux";
if (process.platform === "linux") {
  sealed = "no";
  for (const lib of ["libc.so.6", "libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"]) {
    try {
      const { dlopen, FFIType } = await import("bun:ffi");
      const n = FFIType.u64;
      const { symbols, close } = dlopen(lib, { prctl: { args: [FFIType.i32, n, n, n, n], returns: FFIType.i32 } });
      // Root in the sandbox's user namespace holds every capability there, and a command started
      // as root gets its bounding set: emptied (PR_CAPBSET_DROP = 24, each capability; ambient
      // ones cleared, PR_CAP_AMBIENT = 47, CLEAR_ALL = 4), the tools start with none, so none may
      // trace opencode. Without the capability (a user other than root), the drops fail, and
      // the tools have none anyway.
      for (let cap = 0; cap < 64; cap++) symbols.prctl(24, cap, 0, 0, 0);
      symbols.prctl(47, 4, 0, 0, 0);
      // PR_SET_DUMPABLE = 4, PR_GET_DUMPABLE = 3: /proc/PID/environ and mem closed to the tools.
      if (symbols.prctl(4, 0, 0, 0, 0) === 0 && symbols.prctl(3, 0, 0, 0, 0) === 0) sealed = "yes";
      close();
      break;
    } catch {}
  }
  try {
    const status = readFileSync("/proc/self/status", "utf8");
    const field = (name) => new RegExp("^" + name + ":\\\\s*(\\\\S+)", "m").exec(status)?.[1];
    const none = (name) => /^0+$/.test(field(name) ?? "x");
    capless = field("Uid") !== "0" || (none("CapBnd") && none("CapInh") && none("CapAmb"));
  } catch {}
}
writeSync(1, ${JSON.stringify(REPORT_PREFIX)} + JSON.stringify({ removed, sealed, capless, pid: process.pid }) + "\\n");
export const OcExecGuard = async () => ({});
`;

/**
 * Writes the plugin where the sandbox can read it and nothing inside can write it (outside every
 * writable path): a tool that rewrote it would run its code inside opencode. Returns its file URL
 * and the directory to remove with the server.
 */
export function writeGuardPlugin(): { url: string; dir: string } {
  const dir = ownTempDir("guard");
  const file = join(dir, "oc-exec-guard.js");
  writeFileSync(file, PLUGIN_SOURCE, { mode: 0o444 });
  return { url: pathToFileURL(file).href, dir };
}

/** OPENCODE_CONFIG_CONTENT with the plugin added to whatever plugins it already names. */
export function withGuardPlugin(content: string | undefined, url: string): string {
  let config: Record<string, unknown> = {};
  try {
    const parsed: unknown = content ? JSON.parse(content) : {};
    if (isObj(parsed)) config = parsed;
  } catch {
    // opencode reports invalid content itself; the guard still goes in.
  }
  const plugins = Array.isArray(config.plugin) ? config.plugin : [];
  return JSON.stringify({ ...config, plugin: [...plugins, url] });
}

/**
 * opencode serve as it starts inside the sandbox: a shell reads the password from stdin, puts it
 * into the environment and becomes opencode (exec), so no process but opencode ever holds it.
 */
export function serveReadingPassword(binary: string, args: string[]): { file: string; args: string[] } {
  const script =
    'IFS= read -r OPENCODE_SERVER_PASSWORD || exit 78; export OPENCODE_SERVER_PASSWORD; exec "$@" </dev/null';
  return { file: "/bin/sh", args: ["-c", script, "oc-exec-serve", binary, ...args] };
}

/** The plugin's report, if this stdout line is one. */
export function parseGuardReport(line: string): GuardReport | null {
  if (!line.startsWith(REPORT_PREFIX)) return null;
  try {
    const value: unknown = JSON.parse(line.slice(REPORT_PREFIX.length));
    if (!isObj(value)) return null;
    const { removed, sealed, capless, pid } = value;
    if (typeof removed !== "boolean" || typeof capless !== "boolean" || typeof pid !== "number") return null;
    if (sealed !== "yes" && sealed !== "no" && sealed !== "unsupported") return null;
    return { removed, sealed, capless, pid };
  } catch {
    return null;
  }
}

/**
 * Why the server must not serve with what the guard reported, or null when the password is safe
 * from its tools. Linux needs both; on macOS (seatbelt) there is no prctl, and the docs say what
 * remains.
 */
export function guardProblem(report: GuardReport | null, platform: NodeJS.Platform): string | null {
  if (!report)
    return "opencode did not load oc-exec's guard plugin, which keeps the server's password from its tools (OPENCODE_PURE, or a release that loads no file plugins, prevents it): run single sandboxed turns instead of a server";
  if (!report.removed) return "opencode serve started without its password";
  if (report.sealed === "no" || (report.sealed === "unsupported" && platform === "linux"))
    return "oc-exec's guard plugin could not make opencode serve unreadable to its tools (prctl through bun:ffi failed), so they could read the server's password: run single sandboxed turns instead of a server";
  if (!report.capless)
    return "oc-exec's guard plugin could not take the capabilities away from what opencode serve starts (as root in the sandbox, a tool could trace opencode and read the server's password): run single sandboxed turns instead of a server, or oc-exec as a user other than root";
  return null;
}
