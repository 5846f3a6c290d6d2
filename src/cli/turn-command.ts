// The default command: flags become options, the turn runs through the library's engine, its
// events go to stdout and its progress to stderr. deliverTurn is shared with usage failures.
import type { RunningRehearsal } from "../app/rehearsal.js";
import { rehearse as rehearseTurn } from "../app/rehearse.js";
import { BROKEN_PIPE_EXIT } from "../contract/exit-codes.js";
import { ConfigError } from "../domain/outcome/errors.js";
import { createReporter } from "../domain/progress/reporter.js";
import { openRunReport, type RunReport, writeRunReport } from "../domain/reports/run-report.js";
import type { Backend } from "../engine/backend.js";
import { executeTurn } from "../engine/execute.js";
import { closeBackend, makeBackend } from "../hosts/make-backend.js";
import { readEnvironment } from "../kernel/environment.js";
import type { RunTurnOptions } from "../plan/options.js";
import { type PromptReader, resolveTurnOptions, resolveWholeLimits } from "../plan/resolve-options.js";
import { type Driver, deliver } from "./deliver.js";
import { FLAG_LABELS } from "./flag-table.js";
import { type Display, optionsFromFlags, type RawFlags } from "./flags.js";
import type { CliIo } from "./io.js";
import { givenLimitFlags, limitLabels, limitOptions } from "./limit-flags.js";
import { readPrompt } from "./prompt.js";
import { stdoutFile } from "./stdout-file.js";

export async function turnCommand(args: string[], flags: RawFlags, io: CliIo): Promise<number> {
  // A flag value that does not parse throws a ConfigError here, before anything is written.
  const { options, cli } = optionsFromFlags(flags, args);
  // An unwritable report path is a usage error now, before anything runs or is paid for.
  const report = openRunReport({ junit: cli.junit, suiteName: "oc-exec", traces: true }, io.env, io.stderr);
  const rehearse = flags.rehearse ?? readEnvironment(io.env).rehearse;
  if (flags.inputFormat === "jsonl") {
    // A conversation cannot be rehearsed (yet). Running it for real when a job asked for a rehearsal
    // would reach the real provider and pay: refused before anything runs.
    if (rehearse !== null)
      throw new ConfigError(
        `${flags.rehearse !== undefined ? "--rehearse" : "OC_EXEC_REHEARSE"} does not apply to a conversation (--input-format jsonl) yet; nothing was run, nothing was sent to a model`,
        "UsageError",
      );
    // One patch per run: each turn of a conversation would overwrite the last one's.
    if (flags.outputPatch !== undefined)
      throw new ConfigError(
        "--output-patch writes one turn's changes and does not apply to a conversation (--input-format jsonl)",
        "UsageError",
      );
    return conversationCommand(args, flags, options, cli.display, io, report);
  }
  // One rule for flags that do nothing in the chosen mode (as --text-deltas without --attach): refused.
  const turnOnly = givenLimitFlags(flags, "turn-");
  if (turnOnly.length > 0)
    throw new ConfigError(
      `${turnOnly.join(", ")} limit${turnOnly.length === 1 ? "s" : ""} each turn of a conversation and need${turnOnly.length === 1 ? "s" : ""} --input-format jsonl; a single turn takes --max-steps, --max-tokens, --max-cost-usd and --timeout`,
      "UsageError",
    );
  const reporter = await createReporter({ ...cli.display, stream: io.stderr, env: io.env });
  let rehearsal: RunningRehearsal | null = null;
  try {
    const rehearsing = rehearse !== null;
    const readArgs = rehearsing && args.length === 0 && !cli.promptFile ? ["a rehearsal turn"] : args;
    const read: PromptReader = () =>
      readPrompt({
        args: readArgs,
        promptFile: cli.promptFile,
        stdin: io.stdin,
        stdinTimeoutMs: cli.stdinTimeoutMs,
        noStdin: cli.noStdin,
      });
    const rehearsed = await rehearseTurn(rehearse, FLAG_LABELS, options, read, io.env);
    rehearsal = rehearsed.rehearsal;
    const ownStdout = stdoutFile();
    // Resolved before anything is written, so an invalid value is a usage error like a bad flag.
    const resolved = resolveTurnOptions(
      {
        ...rehearsed.options,
        env: rehearsed.env,
        onStderrLine: reporter.stderrLine,
        onToolStarted: reporter.toolStarted,
      },
      {
        labels: FLAG_LABELS,
        prompt: rehearsed.prompt,
        ownFiles: [...(cli.junit ? [cli.junit] : []), ...(ownStdout ? [ownStdout] : [])],
      },
    );
    // Made with the turn's control: a signal or --timeout before it is ready gives it up.
    let backend: Promise<Backend> | null = null;
    try {
      return await deliverTurn(
        (sink, control) => {
          backend = makeBackend(resolved.placement, control.startup);
          return executeTurn(resolved, backend, sink, control);
        },
        cli.display,
        io,
        reporter,
        report,
      );
    } finally {
      if (backend) await closeBackend(backend);
    }
  } finally {
    reporter.stop();
    await rehearsal?.stop();
    // A stdin we stopped waiting for must not keep the process alive.
    if (!io.stdin.isTTY) io.stdin.destroy();
  }
}

/**
 * Writes a turn's (or a conversation's) events to stdout and its progress to stderr; returns the
 * exit status. Shared with usage failures, which have no turn but still write their result.
 */
export async function deliverTurn(
  drive: Driver,
  display: Display,
  io: CliIo,
  reporter?: Awaited<ReturnType<typeof createReporter>>,
  report: RunReport | null = null,
): Promise<number> {
  const progress = reporter ?? (await createReporter({ ...display, stream: io.stderr, env: io.env }));
  let showing = true;
  let code: number;
  let refused: number | null = null;
  try {
    code = await deliver(drive, io, {
      event(event, stdoutGone) {
        report?.observe(event);
        if (!showing) return;
        if (stdoutGone && (event.type === "result" || event.type === "conversation.result")) {
          // The result could not be delivered; what it says of the stopped turn is not the outcome.
          showing = false;
          if (!display.quiet)
            io.stderr.write(
              `oc-exec: stdout was closed by its reader (e.g. | head): the turn was stopped and its result not written; exit ${BROKEN_PIPE_EXIT}\n`,
            );
          return;
        }
        try {
          progress.event(event);
        } catch (error) {
          // Progress is a courtesy; a failure in it must not cost the turn or its result line.
          showing = false;
          io.stderr.write(`oc-exec: progress display failed, continuing without it: ${String(error)}\n`);
        }
      },
    });
  } finally {
    progress.stop();
    // After the last line, whatever ended the run (a signal, a timeout): the reports say how.
    refused = await writeRunReport(report, io.stderr);
  }
  return refused ?? code;
}

/**
 * --input-format jsonl: stdin is a conversation, one turn per line. --max-steps, --max-tokens,
 * --max-cost-usd and --timeout cover the whole conversation; --turn-* limit each turn.
 */
async function conversationCommand(
  args: string[],
  flags: RawFlags,
  options: Omit<RunTurnOptions, "prompt" | "env">,
  display: Display,
  io: CliIo,
  report: RunReport | null,
): Promise<number> {
  if (args.length > 0 || flags.promptFile)
    throw new ConfigError(
      "--input-format jsonl reads every turn from stdin; give no prompt arguments or --prompt-file",
      "UsageError",
    );
  if (flags.stdin === false)
    throw new ConfigError(
      "--input-format jsonl reads every turn from stdin; it cannot go with --no-stdin",
      "UsageError",
    );
  const { runConversation } = await import("../app/run-conversation.js");
  const { createInterface } = await import("node:readline");
  // The whole conversation's limits keep the flags' own names; each turn's are --turn-*.
  const { maxSteps, maxTokens, maxCostUsd, timeoutMs, ...perTurn } = options;
  const limits = resolveWholeLimits(
    "conversation",
    { maxSteps, maxTokens, maxCostUsd, timeoutMs },
    {
      steps: FLAG_LABELS.maxSteps,
      tokens: FLAG_LABELS.maxTokens,
      cost_usd: FLAG_LABELS.maxCostUsd,
      timeout: FLAG_LABELS.timeoutMs,
    },
  );
  const turn = {
    ...perTurn,
    env: io.env,
    ...limitOptions(flags, "turn-"),
  };
  const labels = { ...FLAG_LABELS, ...limitLabels("turn-") };

  // Checked once before anything is written, as for a single turn; the backend is made once too,
  // and awaited by the conversation, so that a failure to make it still ends in its result line.
  const checked = resolveTurnOptions(turn, { labels });
  const backend = makeBackend(checked.placement);
  // stdin is read only once the backend is ready and the conversation iterates it: readline drops
  // the lines it reads before anyone iterates them (a sandbox takes a while to set up, and a
  // conversation made meanwhile found its input gone and waited for ever).
  const input = new AbortController();
  let reader: ReturnType<typeof createInterface> | null = null;
  async function* lines(): AsyncGenerator<string> {
    reader = createInterface({ input: io.stdin, crlfDelay: Number.POSITIVE_INFINITY, signal: input.signal });
    yield* reader;
  }
  const plan = {
    turn,
    labels,
    limits,
    backend,
    lines: lines(),
    stopInput: () => input.abort(),
  };
  try {
    return await deliverTurn((sink, control) => runConversation(plan, sink, control), display, io, undefined, report);
  } finally {
    await closeBackend(backend);
    (reader as ReturnType<typeof createInterface> | null)?.close();
    if (!io.stdin.isTTY) io.stdin.destroy();
  }
}
