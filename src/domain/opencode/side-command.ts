// The one way oc-exec runs opencode's short side commands (`--version`, `run --help`, `export`,
// `session delete`, `models`, `auth list`): bounded in time, never a shell, output buffered.
// execa is loaded on first use: `oc-exec --version` with a known binary never needs it.
import { rmSync } from "node:fs";
import { ownTempDir } from "../../sys/own-temp.js";

export type SideCommand = { ok: boolean; exitCode: number | null; stdout: string; stderr: string };

export type SideCommandOptions = {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs: number;
  /** What the command reads on stdin (over ssh: the remote script's preamble); none by default. */
  input?: string;
  /**
   * A TMPDIR of its own, removed when it ends: for opencode itself, whose runtime leaves a 5.5 MB
   * native library in TMPDIR at every start (anomalyco/opencode#21427).
   */
  ownTmp?: boolean;
  /** Ends the command's whole group when aborted (the turn stopped before it was needed). */
  signal?: AbortSignal;
};

export async function runSideCommand(
  binary: string,
  args: string[],
  options: SideCommandOptions,
): Promise<SideCommand> {
  const env = options.env ?? process.env;
  const tmp = options.ownTmp ? ownTempDir("opencode", env.TMPDIR || undefined) : null;
  try {
    return await run(binary, args, { ...options, env: tmp ? { ...env, TMPDIR: tmp } : env });
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

/** How long the pipes may stay open after the command ended (a child it left holds them). */
const DRAIN_MS = 1_000;

/**
 * The command in a process group of its own. At its time limit, or when the turn gives it up, the
 * whole group is killed: a command whose child holds its pipes (an opencode that hangs in
 * `--version`) would otherwise never close them. Once the command has exited, what it left behind
 * may keep the pipes a moment, then they are let go.
 */
async function run(
  binary: string,
  args: string[],
  options: SideCommandOptions & { env: NodeJS.ProcessEnv },
): Promise<SideCommand> {
  const { execa } = await import("execa");
  const child = execa(binary, args, {
    env: options.env,
    extendEnv: false,
    cwd: options.cwd,
    detached: true,
    reject: false,
    ...(options.input !== undefined ? { input: options.input } : { stdin: "ignore" as const }),
    maxBuffer: 256 * 1024 * 1024,
    stripFinalNewline: false,
  });
  const killGroup = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, options.timeoutMs);
  // Its own group does not end with oc-exec: an oc-exec that exits meanwhile (a signal) ends it.
  process.once("exit", killGroup);
  options.signal?.addEventListener("abort", killGroup, { once: true });
  if (options.signal?.aborted) killGroup();
  let drain: NodeJS.Timeout | undefined;
  child.once("exit", () => {
    drain = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, DRAIN_MS);
  });
  try {
    const result = await child;
    const text = (value: unknown) => (typeof value === "string" ? value : "");
    return {
      ok: !result.failed && !timedOut,
      exitCode: result.exitCode ?? null,
      stdout: text(result.stdout),
      stderr: text(result.stderr),
    };
  } finally {
    clearTimeout(timer);
    clearTimeout(drain);
    process.off("exit", killGroup);
    options.signal?.removeEventListener("abort", killGroup);
  }
}

/** The last line of a failed command's stderr, for a message. */
export function lastLine(text: string): string {
  return text.trim().split("\n").at(-1) ?? "";
}
