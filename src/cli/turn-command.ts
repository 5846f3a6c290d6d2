// The default command: flags become options, the turn runs through the library's engine, its
// events go to stdout and its progress to stderr. deliverTurn is shared with usage failures.
import { BROKEN_PIPE_EXIT, EXIT_CODES } from "../contract/exit-codes.js";
import type { OcEvent } from "../contract/schema.js";
import { readEnvironment } from "../environment.js";
import type { StopReason } from "../outcome/classify.js";
import { ConfigError } from "../outcome/errors.js";
import { createStdoutWriter } from "../output/stdout-writer.js";
import { createReporter } from "../progress/reporter.js";
import type { RunningRehearsal } from "../scripted/rehearsal.js";
import { isRehearsal, REHEARSALS } from "../scripted/rehearsals.js";
import type { RunTurnOptions } from "../turn/options.js";
import { type PromptReader, resolveTurnOptions } from "../turn/resolve-options.js";
import { TurnControl } from "../turn/control.js";
import { executeTurn } from "../turn/execute.js";
import { type Display, FLAG_LABELS, optionsFromFlags, type RawFlags } from "./flags.js";
import type { CliIo } from "./main.js";
import { readPrompt } from "./prompt.js";

export async function turnCommand(args: string[], flags: RawFlags, io: CliIo): Promise<number> {
  // A flag value that does not parse throws a ConfigError here, before anything is written.
  const { options, cli } = optionsFromFlags(flags, args);
  if (flags.inputFormat === "jsonl") return conversationCommand(args, flags, options, cli.display, io);
  const rehearse = flags.rehearse ?? readEnvironment(io.env).rehearse;
  if (rehearse !== null && !isRehearsal(rehearse)) {
    throw new ConfigError(
      `--rehearse takes one of ${Object.keys(REHEARSALS).join(", ")}, not ${JSON.stringify(rehearse)}`,
      "UsageError",
    );
  }
  const rehearsal = rehearse ? await (await import("../scripted/rehearsal.js")).startRehearsal(rehearse, io.env) : null;
  const reporter = await createReporter({ ...cli.display, stream: io.stderr, env: io.env });
  try {
    const readArgs = rehearsal && args.length === 0 && !cli.promptFile ? ["a rehearsal turn"] : args;
    const read: PromptReader = () =>
      readPrompt({ args: readArgs, promptFile: cli.promptFile, stdin: io.stdin, stdinTimeoutMs: cli.stdinTimeoutMs });
    // Resolved before anything is written, so an invalid value is a usage error like a bad flag.
    const resolved = resolveTurnOptions(
      {
        ...(rehearsal ? rehearsed(options, rehearsal) : options),
        env: rehearsal?.env ?? io.env,
        onStderrLine: reporter.stderrLine,
        onToolStarted: reporter.toolStarted,
      },
      { labels: FLAG_LABELS, prompt: rehearsal ? rehearsedPrompt(read, rehearse!, rehearsal) : read },
    );
    return await deliverTurn((sink, control) => executeTurn(resolved, sink, control), cli.display, io, reporter);
  } finally {
    reporter.stop();
    await rehearsal?.stop();
    // A stdin we stopped waiting for must not keep the process alive.
    if (!io.stdin.isTTY) io.stdin.destroy();
  }
}

/** A rehearsal runs in its own throwaway workspace, on the scripted model, with no export. */
function rehearsed(options: Omit<RunTurnOptions, "prompt" | "env">, rehearsal: RunningRehearsal) {
  return {
    ...options,
    dir: rehearsal.dir,
    model: rehearsal.model,
    session: undefined,
    continue: undefined,
    export: false,
    idleTimeoutMs: options.idleTimeoutMs ?? rehearsal.defaults?.idleTimeoutMs,
    maxSteps: options.maxSteps ?? rehearsal.defaults?.maxSteps,
  };
}

function rehearsedPrompt(read: PromptReader, name: string, rehearsal: RunningRehearsal): PromptReader {
  return async () => {
    const prompt = await read();
    return {
      text: `${rehearsal.promptPrefix}${prompt.text}`,
      warnings: [
        {
          code: "rehearsal",
          message: `a rehearsal (${name}): the real opencode against oc-exec's scripted model, in a throwaway HOME and workspace; nothing in this run is a real answer`,
        },
        ...prompt.warnings,
      ],
    };
  };
}

/** Runs a turn, handing each event to the sink as it happens; resolves with the result. */
export type TurnDriver = (sink: (event: OcEvent) => void, control: TurnControl) => Promise<unknown>;

/**
 * Writes a turn's events to stdout and its progress to stderr; returns the exit status. Events
 * are handled as the engine emits them, with no queue between: a reader slower than opencode
 * holds opencode back (control.backpressure) instead of letting events pile up in memory.
 */
export async function deliverTurn(
  drive: TurnDriver,
  display: Display,
  io: CliIo,
  reporter?: Awaited<ReturnType<typeof createReporter>>,
): Promise<number> {
  const progress = reporter ?? (await createReporter({ ...display, stream: io.stderr, env: io.env }));
  const control = new TurnControl();
  let brokenPipe = false;
  const stdout = createStdoutWriter(process.stdout, () => {
    brokenPipe = true;
    control.abort({ kind: "broken_pipe" });
  });
  const onSignal = (signal: NodeJS.Signals) => {
    const reason: StopReason = signal === "SIGINT" ? { kind: "interrupted", signal } : { kind: "terminated", signal };
    control.abort(reason);
  };
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, onSignal);
  let exitCode: number = EXIT_CODES.internal_error;
  let showing = true;
  let holding = false;
  const sink = (event: OcEvent) => {
    const behind = !stdout.write(event);
    // A conversation's own result comes after its turns' and is the exit status.
    if (event.type === "result" || event.type === "conversation.result") exitCode = event.exit_code;
    if (showing) {
      try {
        progress.event(event);
      } catch (error) {
        // Progress is a courtesy; a failure in it must not cost the turn or its result line.
        showing = false;
        io.stderr.write(`oc-exec: progress display failed, continuing without it: ${String(error)}\n`);
      }
    }
    if (behind && !holding) {
      holding = true;
      control.backpressure(true);
      void stdout.drained().then(() => {
        holding = false;
        control.backpressure(false);
      });
    }
  };
  try {
    await drive(sink, control);
    // The result is written; let the reader take the rest before the exit status is set.
    if (holding) await stdout.drained();
  } finally {
    progress.stop();
    for (const s of signals) process.off(s, onSignal);
  }
  return brokenPipe || stdout.broken ? BROKEN_PIPE_EXIT : exitCode;
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
): Promise<number> {
  if (args.length > 0 || flags.promptFile)
    throw new ConfigError(
      "--input-format jsonl reads every turn from stdin; give no prompt arguments or --prompt-file",
      "UsageError",
    );
  const { runConversation } = await import("../turn/conversation.js");
  const { createInterface } = await import("node:readline");
  const { parseAmount, parseCount, parseDurationFlag } = await import("./duration.js");
  const input = new AbortController();
  const lines = createInterface({ input: io.stdin, crlfDelay: Number.POSITIVE_INFINITY, signal: input.signal });
  const turn = {
    ...options,
    env: io.env,
    maxSteps: flags.turnMaxSteps === undefined ? undefined : parseCount(flags.turnMaxSteps, "--turn-max-steps"),
    maxTokens: flags.turnMaxTokens === undefined ? undefined : parseCount(flags.turnMaxTokens, "--turn-max-tokens"),
    maxCostUsd:
      flags.turnMaxCostUsd === undefined ? undefined : parseAmount(flags.turnMaxCostUsd, "--turn-max-cost-usd"),
    timeoutMs: flags.turnTimeout === undefined ? undefined : parseDurationFlag(flags.turnTimeout, "--turn-timeout"),
  };
  const labels = {
    ...FLAG_LABELS,
    maxSteps: "--turn-max-steps",
    maxTokens: "--turn-max-tokens",
    maxCostUsd: "--turn-max-cost-usd",
    timeoutMs: "--turn-timeout",
  };
  // Checked once before anything is written, as for a single turn.
  resolveTurnOptions({ ...turn, prompt: "check" }, { labels });
  const plan = {
    turn,
    labels,
    limits: {
      maxSteps: options.maxSteps || null,
      maxTokens: options.maxTokens || null,
      maxCostUsd: options.maxCostUsd || null,
      timeoutMs: options.timeoutMs || null,
      // The whole conversation's limits keep the flags' own names; each turn's are --turn-*.
      options: {
        steps: FLAG_LABELS.maxSteps,
        tokens: FLAG_LABELS.maxTokens,
        cost_usd: FLAG_LABELS.maxCostUsd,
        timeout: FLAG_LABELS.timeoutMs,
      },
    },
    lines,
    stopInput: () => input.abort(),
  };
  try {
    return await deliverTurn((sink, control) => runConversation(plan, sink, control), display, io);
  } finally {
    lines.close();
    if (!io.stdin.isTTY) io.stdin.destroy();
  }
}
