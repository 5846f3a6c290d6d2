// The CLI entry: parse flags, run the turn through the library API, write events to stdout and
// progress to stderr, and return the exit status. Only bin/oc-exec.js sets process.exitCode.
import { CommanderError } from "commander";
import { createStdoutWriter, writeStdoutText } from "../output/stdout-writer.js";
import { BROKEN_PIPE_EXIT, EXIT_CODES } from "../outcome/exit-codes.js";
import { ConfigError } from "../outcome/errors.js";
import type { StopReason } from "../outcome/classify.js";
import type { TurnOptions } from "../turn/options.js";
import { buildProgram, settingsFrom, type CliSettings, type RawFlags } from "./program.js";
import { readPrompt } from "./prompt.js";

export type CliIo = { argv: string[]; env: NodeJS.ProcessEnv; stdin: NodeJS.ReadStream; stderr: NodeJS.WriteStream };

const defaultIo = (): CliIo => ({
  argv: process.argv.slice(2),
  env: process.env,
  stdin: process.stdin,
  stderr: process.stderr,
});

/** `oc-exec resume [ID | --last] [prompt...]` is a friendly spelling of --session / --continue. */
export function rewriteResume(argv: string[]): string[] {
  if (argv[0] !== "resume") return argv;
  const [, first, ...rest] = argv;
  if (first === "--last" || first === undefined) return ["--continue", ...rest];
  if (/^ses_/.test(first)) return ["--session", first, ...rest];
  return ["--continue", first, ...rest];
}

export async function main(io: CliIo = defaultIo()): Promise<number> {
  io = { ...io, argv: rewriteResume(io.argv) };
  const program = buildProgram({ writeOut: writeStdoutText, writeErr: (s) => io.stderr.write(s) });
  let subcommand: { name: string; file?: string; flags?: Record<string, unknown> } | null = null;
  for (const command of program.commands) {
    command.action((...args: unknown[]) => {
      // commander passes (arguments..., options, command); doctor has no argument.
      const file = typeof args[0] === "string" ? args[0] : undefined;
      const flags = (file === undefined ? args[0] : args[1]) as Record<string, unknown>;
      subcommand = { name: command.name(), file, flags };
    });
  }
  program.action(() => {});

  let settings: CliSettings | null = null;
  let launchError: TurnOptions["launchError"] = null;
  try {
    program.parse(io.argv, { from: "user" });
    const chosen = subcommand as { name: string; file?: string; flags?: Record<string, unknown> } | null;
    if (chosen?.name === "schema") {
      const { renderJsonSchema } = await import("../events/json-schema.js");
      writeStdoutText(renderJsonSchema());
      return 0;
    }
    if (chosen?.name === "doctor") {
      const { doctorCommand } = await import("./doctor.js");
      return await doctorCommand(chosen.flags ?? {}, io);
    }
    if (chosen?.name === "replay" || chosen?.name === "validate")
      return await runOffline(chosen.name, chosen.file!, chosen.flags ?? {}, io);
    settings = settingsFrom(program.opts<RawFlags>(), io.env);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === "commander.helpDisplayed" ||
        error.code === "commander.help" ||
        error.code === "commander.version"
      )
        return 0;
      io.stderr.write("Run oc-exec --help for usage.\n");
      launchError = { name: "UsageError", message: error.message.replace(/^error:\s*/, "") };
    } else if (error instanceof ConfigError) {
      io.stderr.write(`oc-exec: ${error.message}\nRun oc-exec --help for usage.\n`);
      launchError = { name: error.name, message: error.message };
    } else throw error;
  }
  return runCli(io, settings, program.args, launchError);
}

async function runOffline(
  name: "replay" | "validate",
  file: string,
  flags: Record<string, unknown>,
  io: CliIo,
): Promise<number> {
  const { replayCommand, validateCommand } = await import("./offline.js");
  try {
    return name === "replay" ? await replayCommand(file, flags, io) : await validateCommand(file, flags, io);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`oc-exec ${name}: ${error.message}\n`);
    return EXIT_CODES.config_error;
  }
}

async function runCli(
  io: CliIo,
  settings: CliSettings | null,
  args: string[],
  launchError: TurnOptions["launchError"],
): Promise<number> {
  // Loaded here, not at the top: --help and usage errors should not pay for execa and the turn.
  const [{ createReporter }, { runTurn }] = await Promise.all([
    import("../progress/reporter.js"),
    import("../turn/run-turn.js"),
  ]);
  const reporter = await createReporter({
    quiet: settings?.quiet ?? false,
    verbose: settings?.verbose ?? false,
    timestamps: settings?.timestamps ?? false,
    color: settings?.color ?? "auto",
    stream: io.stderr,
    env: io.env,
  });
  const turnOptions: TurnOptions = {
    ...(settings?.turn ?? { env: io.env }),
    launchError,
    onStderrLine: reporter.stderrLine,
    prompt: () =>
      readPrompt({
        args,
        promptFile: settings?.promptFile ?? null,
        stdin: io.stdin,
        stdinTimeoutMs: settings?.stdinTimeoutMs ?? 5000,
      }),
  };
  const turn = runTurn(turnOptions);
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
    let progress = true;
    for await (const event of turn) {
      const behind = !stdout.write(event);
      if (event.type === "result") exitCode = event.exit_code;
      if (progress) {
        try {
          reporter.event(event);
        } catch (error) {
          // Progress is a courtesy; a failure in it must not cost the turn or its result line.
          progress = false;
          io.stderr.write(`oc-exec: progress display failed, continuing without it: ${String(error)}\n`);
        }
      }
      // A reader slower than opencode (a pipe into a busy jq) holds the turn back rather than
      // letting unwritten events pile up in memory.
      if (behind) await stdout.drained();
    }
  } finally {
    reporter.stop();
    for (const s of signals) process.off(s, onSignal);
    // A stdin we stopped waiting for must not keep the process alive.
    if (!io.stdin.isTTY) io.stdin.destroy();
  }
  return brokenPipe || stdout.broken ? BROKEN_PIPE_EXIT : exitCode;
}
