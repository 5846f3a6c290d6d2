// Runs opencode for one turn: stream and normalize both pipes, enforce the timeouts and budgets,
// and stop the whole process tree through one path (signals, timeouts, budgets, a blocked prompt,
// a bug of ours). While the consumer is behind, opencode's stdout is not read (flow control).
// Resolves when opencode has exited and its pipes are drained.
import { LineSplitter } from "../events/line-splitter.js";
import type { Normalizer } from "../events/normalize.js";
import type { Invocation } from "../opencode/invocation.js";
import { startProcess } from "../opencode/process.js";
import type { StopReason, TurnEnd } from "../outcome/classify.js";
import { checkBudgets } from "./budget.js";
import type { TurnControl } from "./control.js";
import { DEFAULTS, type TurnOptions } from "./options.js";
import { TurnTimers } from "./timers.js";
import { splitterOptions } from "./turn-core.js";

const CONFIG_ERROR_GRACE_MS = 3000;

/** The opencode line being normalized, for --include-raw. */
export type RawLine = { text: string | null };

export async function runProcess(
  options: TurnOptions,
  normalizer: Normalizer,
  end: TurnEnd,
  control: TurnControl,
  invocation: Invocation,
  rawLine: RawLine,
): Promise<void> {
  const killAfterMs = options.killAfterMs ?? DEFAULTS.killAfterMs;
  const budgets = {
    maxSteps: options.maxSteps ?? null,
    maxTokens: options.maxTokens ?? null,
    maxCostUsd: options.maxCostUsd ?? null,
  };
  const hasBudgets = budgets.maxSteps !== null || budgets.maxTokens !== null || budgets.maxCostUsd !== null;
  const warned = new Set<"steps" | "tokens" | "cost_usd">();
  let killTimer: NodeJS.Timeout | null = null;
  let sawJson = false;

  // The one abort path: signals, timeouts and budgets all come through here.
  const stop = (reason: StopReason) => {
    const repeated = end.stop !== null;
    if (!repeated) end.stop = reason;
    if (repeated && reason.kind === "interrupted") {
      // A second Ctrl-C: no more grace.
      running.killTree("SIGKILL");
      return;
    }
    if (repeated) return;
    // From here on opencode's output is read whether or not anyone keeps up: a consumer that
    // stopped reading must not keep a dying turn from ending.
    running.holdStdout(false);
    running.killTree("SIGTERM");
    killTimer = setTimeout(() => running.killTree("SIGKILL"), killAfterMs);
  };

  const timers = new TurnTimers(
    {
      turnMs: options.timeoutMs ?? null,
      startupMs: options.startupTimeoutMs === undefined ? DEFAULTS.startupTimeoutMs : options.startupTimeoutMs,
      idleMs: options.idleTimeoutMs ?? null,
    },
    (kind, ms) => stop({ kind: "timeout", timeout: kind, ms }),
  );

  // A bug in our own line handling must not crash the process or lose the result: record it,
  // stop the turn, and let the classifier report internal_error.
  const guard =
    <T>(handle: (value: T) => void) =>
    (value: T) => {
      try {
        handle(value);
      } catch (error) {
        end.internalError ??= { message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
        stop({ kind: "internal" });
      }
    };

  const split = splitterOptions(
    options.maxLineBytes ?? DEFAULTS.maxLineBytes,
    options.maxOutputBytes ?? DEFAULTS.maxOutputBytes,
  );
  const stdout = new LineSplitter(
    guard((line) => {
      timers.activity();
      // A cut line is valid JSON but not what opencode wrote, so it is not passed off as raw.
      rawLine.text = line.truncated || line.cut ? null : line.text;
      normalizer.stdoutLine(line.text, { truncated: line.truncated, bytes: line.bytes });
      rawLine.text = null;
      if (!sawJson && normalizer.facts.stream.json_lines > 0) {
        sawJson = true;
        timers.firstJson();
      } else if (!sawJson) timers.signOfLife();
      if (normalizer.facts.blockedOnPrompt) stop({ kind: "blocked" });
      if (hasBudgets) {
        const check = checkBudgets(normalizer.facts, budgets, warned);
        for (const w of check.warnings) normalizer.warning(w.code, w.message);
        if (check.exceeded) stop(check.exceeded);
      }
    }),
    split.stdout,
  );
  // Some releases (1.0) report a configuration error on stderr and then wait forever; when that
  // happens before any JSON event, give opencode a moment, then stop it.
  let configGrace: NodeJS.Timeout | null = null;
  const stderr = new LineSplitter(
    guard((line) => {
      timers.activity();
      if (!sawJson) timers.signOfLife();
      rawLine.text = line.text;
      normalizer.stderrLine(line.text);
      rawLine.text = null;
      options.onStderrLine?.(line.text);
      if (!sawJson && configGrace === null && normalizer.facts.stderrConfigError) {
        configGrace = setTimeout(() => {
          if (!sawJson) stop({ kind: "blocked" });
        }, CONFIG_ERROR_GRACE_MS);
      }
    }),
    split.stderr,
  );

  const running = startProcess(invocation, { stdout: (c) => stdout.push(c), stderr: (c) => stderr.push(c) });
  timers.start();
  const unsubscribe = control.subscribe(stop);
  if (control.reason) stop(control.reason);
  const hold = (held: boolean) => {
    if (held && end.stop !== null) return;
    running.holdStdout(held);
    timers.hold(held);
  };
  const unsubscribeFlow = control.onBackpressure(hold);
  if (control.isHeld) hold(true);

  try {
    const ended = await running.done;
    stdout.end();
    stderr.end();
    if (ended.spawnError)
      end.launchError = {
        name: "SpawnError",
        message: `could not start opencode at ${invocation.file}: ${ended.spawnError}`,
      };
    else end.process = { exitCode: ended.exitCode, signal: ended.signal };
  } finally {
    timers.clear();
    if (killTimer) clearTimeout(killTimer);
    if (configGrace) clearTimeout(configGrace);
    unsubscribe();
    unsubscribeFlow();
  }
}
