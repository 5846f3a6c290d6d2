// Runs the built oc-exec CLI as a user would, and checks every stdout line against the schema.
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { OcEvent, ResultEvent } from "../../src/contract/schema.js";
import { checkStream } from "./schema-check.js";

export const BIN = fileURLToPath(new URL("../../bin/oc-exec.js", import.meta.url));
/** oc-exec's version as package.json has it: what --version and run.started must report. */
export const OWN_VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

export type CliRun = {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  events: OcEvent[];
  result: ResultEvent;
  types: string[];
};

export type CliOptions = {
  env: Record<string, string>;
  cwd?: string;
  /** A string to pipe in and close; "never" keeps stdin open and silent; default: closed at once. */
  stdin?: string | "never";
  /** Called once the process is up, e.g. to send it a signal. */
  onSpawn?: (child: import("node:child_process").ChildProcess) => void;
  /** Called with each stdout chunk. */
  onStdout?: (text: string, child: import("node:child_process").ChildProcess) => void;
  validate?: boolean;
};

export function runCliRaw(args: string[], options: CliOptions): Promise<Omit<CliRun, "events" | "result" | "types">> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: options.env,
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (d: string) => {
      stdout += d;
      options.onStdout?.(d, child);
    });
    child.stderr.on("data", (d: string) => (stderr += d));
    child.stdin.on("error", () => {});
    if (options.stdin === "never") {
      // Keep the pipe open and silent, like `sleep 60 | oc-exec ...`.
    } else if (options.stdin !== undefined) child.stdin.end(options.stdin);
    else child.stdin.end();
    options.onSpawn?.(child);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      child.stdin.destroy();
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export async function runCli(args: string[], options: CliOptions): Promise<CliRun> {
  const raw = await runCliRaw(args, options);
  const events = options.validate === false ? parseLines(raw.stdout) : checkStream(raw.stdout);
  const result = events[events.length - 1] as ResultEvent;
  return { ...raw, events, result, types: events.map((e) => e.type) };
}

export function parseLines(stdout: string): OcEvent[] {
  return stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as OcEvent);
}

export function eventsOf<T extends OcEvent["type"]>(
  run: { events: OcEvent[] },
  type: T,
): Extract<OcEvent, { type: T }>[] {
  return run.events.filter((e): e is Extract<OcEvent, { type: T }> => e.type === type);
}

/**
 * A shell script as a CI step runs it (`bash -e …`), asynchronously (a scripted model server in this
 * process must answer meanwhile), stdin not a pipe anyone holds open.
 */
export function runBash(
  flags: string[],
  script: string,
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", [...flags, "-c", script], { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A directory with `oc-exec` in it, as after `npm install -g`: put it first on PATH. */
export function cliOnPath(parent: string): string {
  const bin = mkdtempSync(join(parent, "bin-"));
  writeFileSync(join(bin, "oc-exec"), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, "oc-exec"), 0o755);
  return bin;
}

/** The shell block marked `<!-- example: NAME -->` in a file of the repository (README.md, docs/…). */
export function docExample(file: string, name: string): string {
  const text = readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");
  const m = new RegExp(`<!-- example: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(text);
  if (!m) throw new Error(`${file} has no example ${name}`);
  return m[1]!;
}

/** ./node_modules/.bin/oc-exec in `dir`, as after a workflow's install step: this checkout's build. */
export function installShim(dir: string): void {
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  writeFileSync(join(dir, "node_modules", ".bin", "oc-exec"), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, {
    mode: 0o755,
  });
}
