// The one way oc-exec runs opencode's short side commands (`--version`, `run --help`, `export`,
// `session delete`, `models`, `auth list`): bounded in time, never a shell, output buffered.
// execa is loaded on first use: `oc-exec --version` with a known binary never needs it.
import { rmSync } from "node:fs";
import { ownTempDir } from "../process/own-temp.js";

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
};

export async function runSideCommand(
  binary: string,
  args: string[],
  options: SideCommandOptions,
): Promise<SideCommand> {
  const { execa } = await import("execa");
  const env = options.env ?? process.env;
  const tmp = options.ownTmp ? ownTempDir("opencode", env.TMPDIR || undefined) : null;
  const result = await execa(binary, args, {
    env: tmp ? { ...env, TMPDIR: tmp } : options.env,
    extendEnv: options.env === undefined && !tmp,
    cwd: options.cwd,
    timeout: options.timeoutMs,
    killSignal: "SIGKILL",
    reject: false,
    ...(options.input !== undefined ? { input: options.input } : { stdin: "ignore" as const }),
    maxBuffer: 256 * 1024 * 1024,
    stripFinalNewline: false,
  }).finally(() => tmp && rmSync(tmp, { recursive: true, force: true }));
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  return {
    ok: !result.failed,
    exitCode: result.exitCode ?? null,
    stdout: text(result.stdout),
    stderr: text(result.stderr),
  };
}

/** The last line of a failed command's stderr, for a message. */
export function lastLine(text: string): string {
  return text.trim().split("\n").at(-1) ?? "";
}
