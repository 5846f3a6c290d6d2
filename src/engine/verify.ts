// --verify: after a turn that succeeded, each command runs through the shell in the workspace (in
// the sandbox when the turn has one), in order, stopping at the first failure. What a failing one
// printed goes back to the agent in the same session, bounded and redacted; the engine
// (execute.ts) decides whether it gets another round. Each command is a process tree of its own:
// a timeout or a stop of the turn ends all of it.

import type { EventOf } from "../contract/schema.js";
import type { Redactor } from "../domain/events/secrets.js";
import type { StopReason } from "../domain/outcome/classify.js";
import { startProcess } from "../sys/process.js";
import type { CommandLaunch } from "./backend.js";

export type CheckRun = Omit<EventOf<"verify.finished">, "type" | "seq" | "time" | "session_id" | "round" | "passed">;

/** What a check shows of its output: the end, where the error usually is. */
const TAIL_LINES = 40;
const TAIL_BYTES = 4096;
/** What is kept while it runs: enough for the tail, however much it prints. */
const KEEP_BYTES = 64 * 1024;

function outputTail(text: string): string {
  const lines = text.replace(/\r\n/g, "\n").trimEnd().split("\n").slice(-TAIL_LINES).join("\n");
  if (Buffer.byteLength(lines) <= TAIL_BYTES) return lines;
  return `…${Buffer.from(lines)
    .subarray(-TAIL_BYTES)
    .toString("utf8")
    .replace(/^\uFFFD+/, "")}`;
}

/** The output without the wrapper's own lines (over ssh, the remote script's markers). */
function commandsOwn(text: string, wrapperLine: RegExp | undefined): string {
  if (!wrapperLine) return text;
  return text
    .split("\n")
    .filter((line) => !wrapperLine.test(line))
    .join("\n");
}

export type CheckContext = {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** ms, or null for no limit of its own. */
  timeoutMs: number | null;
  killAfterMs: number;
  redactor: Redactor;
  /** The backend's way to run a command where the turn runs (inside its sandbox), if it has one. */
  wrap?: (command: CommandLaunch) => Promise<CommandLaunch>;
  /** Called with a stop function: a stop of the turn (signal, turn timeout) ends the check. */
  onStop(stop: (reason: StopReason) => void): () => void;
};

/** Runs one check; resolves when it and everything it started have ended. */
export async function runCheck(command: string, ctx: CheckContext): Promise<CheckRun & { stop: StopReason | null }> {
  const started = Date.now();
  const plain: CommandLaunch = { file: "/bin/sh", args: ["-c", command], env: ctx.env as Record<string, string> };
  const launch = ctx.wrap ? await ctx.wrap(plain) : plain;
  let kept = "";
  const keep = (chunk: Buffer) => {
    kept += chunk.toString("utf8");
    if (kept.length > KEEP_BYTES) kept = kept.slice(-KEEP_BYTES);
  };
  const child = startProcess(
    { ...launch, cwd: ctx.cwd, input: launch.input ?? "" },
    { stdout: keep, stderr: keep },
    { keepInputOpen: launch.holdInput ?? false },
  );
  let timedOut = false;
  let stop: StopReason | null = null;
  const end = () => child.stop({ graceMs: ctx.killAfterMs });
  const timer =
    ctx.timeoutMs === null
      ? null
      : setTimeout(() => {
          timedOut = true;
          end();
        }, ctx.timeoutMs);
  const unsubscribe = ctx.onStop((reason) => {
    stop ??= reason;
    end();
  });
  try {
    const ended = await child.done;
    return {
      command,
      exit_code: ended.spawnError ? 127 : timedOut || stop ? null : ended.exitCode,
      signal: ended.signal,
      timed_out: timedOut,
      duration_ms: Date.now() - started,
      output: ctx.redactor.text(
        outputTail(ended.spawnError ? ended.spawnError : commandsOwn(kept, launch.wrapperLine)),
      ),
      stop,
    };
  } finally {
    if (timer) clearTimeout(timer);
    unsubscribe();
  }
}

/** The message that sends the agent back: which check failed, how, and what it printed. */
export function repairPrompt(check: CheckRun, schemaInstruction: string): string {
  const how = check.timed_out
    ? `did not finish within its time limit`
    : check.exit_code === null
      ? `was stopped (${check.signal ?? "no status"})`
      : `failed with exit status ${check.exit_code}`;
  const output = check.output ? `Its output ends with:\n\n\`\`\`\n${check.output}\n\`\`\`` : "It printed nothing.";
  return `The check \`${check.command}\` ${how} after your changes. ${output}\n\nFix the cause so that the check passes, then say what you changed.${schemaInstruction}`;
}
