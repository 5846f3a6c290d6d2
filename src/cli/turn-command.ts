// The default command: flags become options, the turn runs through the library's engine, its
// events go to stdout and its progress to stderr. deliverTurn is shared with usage failures.
import { BROKEN_PIPE_EXIT, EXIT_CODES } from "../contract/exit-codes.js";
import type { StopReason } from "../outcome/classify.js";
import { createStdoutWriter } from "../output/stdout-writer.js";
import { createReporter } from "../progress/reporter.js";
import { resolveTurnOptions } from "../turn/resolve-options.js";
import { startTurn, type Turn } from "../turn/run-turn.js";
import { type Display, FLAG_LABELS, optionsFromFlags, type RawFlags } from "./flags.js";
import type { CliIo } from "./main.js";
import { readPrompt } from "./prompt.js";

export async function turnCommand(args: string[], flags: RawFlags, io: CliIo): Promise<number> {
  // A flag value that does not parse throws a ConfigError here, before anything is written.
  const { options, cli } = optionsFromFlags(flags, args);
  const reporter = await createReporter({ ...cli.display, stream: io.stderr, env: io.env });
  // Resolved before anything is written, so an invalid value is a usage error like a bad flag.
  let resolved: ReturnType<typeof resolveTurnOptions>;
  try {
    resolved = resolveTurnOptions(
      { ...options, env: io.env, onStderrLine: reporter.stderrLine, onToolStarted: reporter.toolStarted },
      {
        labels: FLAG_LABELS,
        prompt: () =>
          readPrompt({ args, promptFile: cli.promptFile, stdin: io.stdin, stdinTimeoutMs: cli.stdinTimeoutMs }),
      },
    );
  } catch (error) {
    reporter.stop();
    throw error;
  }
  const turn = startTurn(() => resolved);
  try {
    return await deliverTurn(turn, cli.display, io, reporter);
  } finally {
    // A stdin we stopped waiting for must not keep the process alive.
    if (!io.stdin.isTTY) io.stdin.destroy();
  }
}

/** Writes a turn's events to stdout and its progress to stderr; returns the exit status. */
export async function deliverTurn(
  turn: Turn,
  display: Display,
  io: CliIo,
  reporter?: Awaited<ReturnType<typeof createReporter>>,
): Promise<number> {
  const progress = reporter ?? (await createReporter({ ...display, stream: io.stderr, env: io.env }));
  let brokenPipe = false;
  const stdout = createStdoutWriter(process.stdout, () => {
    brokenPipe = true;
    turn.abort({ kind: "broken_pipe" });
  });
  const onSignal = (signal: NodeJS.Signals) => {
    const reason: StopReason = signal === "SIGINT" ? { kind: "interrupted", signal } : { kind: "terminated", signal };
    turn.abort(reason);
  };
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, onSignal);
  let exitCode: number = EXIT_CODES.internal_error;
  try {
    let showing = true;
    for await (const event of turn) {
      const behind = !stdout.write(event);
      if (event.type === "result") exitCode = event.exit_code;
      if (showing) {
        try {
          progress.event(event);
        } catch (error) {
          // Progress is a courtesy; a failure in it must not cost the turn or its result line.
          showing = false;
          io.stderr.write(`oc-exec: progress display failed, continuing without it: ${String(error)}\n`);
        }
      }
      // A reader slower than opencode (a pipe into a busy jq) holds the turn back rather than
      // letting unwritten events pile up in memory.
      if (behind) await stdout.drained();
    }
  } finally {
    progress.stop();
    for (const s of signals) process.off(s, onSignal);
  }
  return brokenPipe || stdout.broken ? BROKEN_PIPE_EXIT : exitCode;
}
