// Runs one turn from start to `result`: locate opencode, write run.started, read the prompt,
// spawn, stream and normalize, stop on signals, timeouts and budgets, classify, write result.
// Every path ends in exactly one result event, including bugs in this file.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { Emitter } from "../events/emitter.js";
import { LineSplitter } from "../events/line-splitter.js";
import { Normalizer } from "../events/normalize.js";
import type { EventDraft, OcEvent, ResultEvent } from "../events/schema.js";
import { SCHEMA_VERSION } from "../events/schema-version.js";
import { mergeConfigContent } from "../opencode/config-content.js";
import { buildInvocation, titleFor, type Invocation } from "../opencode/invocation.js";
import { buildPolicy } from "../opencode/permissions.js";
import { deleteSession, exportSession } from "../opencode/session-commands.js";
import { writeFileAtomic } from "../output/last-message.js";
import { checkStructuredOutput, schemaInstruction } from "./structured-output.js";
import { locateOpencode, type LocateResult } from "../opencode/locate.js";
import { startProcess } from "../opencode/process.js";
import { TESTED_RANGE } from "../opencode/features.js";
import { unsupportedFlags } from "../opencode/invocation.js";
import { detectOpencode, type Detected } from "../opencode/version.js";
import { classifyOutcome, type StopReason, type TurnEnd } from "../outcome/classify.js";
import { ConfigError } from "../outcome/errors.js";
import { buildResult } from "../outcome/result.js";
import { VERSION } from "../version.js";
import { checkBudgets } from "./budget.js";
import { DEFAULTS, type TurnOptions } from "./options.js";
import { TurnControl } from "./control.js";
import { TurnTimers } from "./timers.js";

const STDERR_MAX_LINE = 1024 * 1024;
const CONFIG_ERROR_GRACE_MS = 3000;

function checkWorkspace(dir: string): string | null {
  try {
    return statSync(dir).isDirectory() ? null : `--dir ${dir} is not a directory`;
  } catch {
    return `--dir ${dir} does not exist`;
  }
}

function checkFiles(files: string[], cwd: string): { resolved: string[]; error: string | null } {
  const resolved = files.map((f) => resolve(cwd, f));
  for (const file of resolved) {
    try {
      if (!statSync(file).isFile()) return { resolved, error: `--file ${file} is not a file` };
    } catch {
      return { resolved, error: `--file ${file} does not exist` };
    }
  }
  return { resolved, error: null };
}

function launchProblem(options: TurnOptions, located: LocateResult, workspace: string): { name: string; message: string } | null {
  if (options.launchError) return options.launchError;
  const dirError = checkWorkspace(workspace);
  if (dirError) return { name: "WorkspaceError", message: dirError };
  if (!located.ok) return { name: "OpencodeNotFound", message: located.message };
  return null;
}

export async function executeTurn(options: TurnOptions, sink: (event: OcEvent) => void, control = new TurnControl()): Promise<ResultEvent> {
  control.follow(options.signal);
  const clock = options.clock ?? Date.now;
  const startedAt = clock();
  const env = options.env ?? process.env;
  const workspace = resolve(options.dir ?? process.cwd());
  let result: ResultEvent | null = null;
  let after: AfterTurn = {};
  const normalizer: Normalizer = new Normalizer(
    {
      workspace,
      resume: options.session ?? null,
      continuing: options.continueLast ?? false,
      fork: options.fork ?? false,
      maxOutputBytes: options.maxOutputBytes ?? DEFAULTS.maxOutputBytes,
      maxLineBytes: options.maxLineBytes ?? DEFAULTS.maxLineBytes,
    },
    // --include-raw: events derived from an opencode line carry that line.
    (draft) => emitter.emit(options.includeRaw && rawLine.text !== null ? ({ ...draft, raw: rawLine.text } as EventDraft) : draft),
  );
  const rawLine: RawLine = { text: null };
  const emitter = new Emitter(
    (event) => {
      if (event.type === "result") result = event;
      sink(event);
    },
    () => normalizer.facts.sessionId,
    clock,
  );
  const end: TurnEnd = { stop: null, launchError: null, internalError: null, process: null };
  const stopFromSignal = () => {
    end.stop ??= control.reason;
  };

  try {
    const located = locateOpencode(options.opencode ?? env.OC_EXEC_OPENCODE ?? null, env.PATH);
    const detected = located.ok ? await detectOpencode(located.binary, env) : null;
    const version = detected?.version ?? null;
    emitter.emit({
      type: "run.started",
      schema_version: SCHEMA_VERSION,
      oc_exec_version: VERSION,
      opencode: { path: located.ok ? located.binary.path : located.path, version },
      cwd: workspace,
      model: options.model ?? null,
      agent: options.agent ?? null,
      resume: options.session ?? null,
    });
    end.launchError = launchProblem(options, located, workspace);
    if (detected && !detected.tested) {
      normalizer.warning("untested_opencode", `opencode ${version ?? "of unknown version"} is not a release oc-exec was tested with (${TESTED_RANGE}); its output may differ`);
    }
    const missing = detected
      ? unsupportedFlags(
          { variant: options.variant ?? null, thinking: options.thinking ?? false, pure: options.pure ?? false, auto: options.auto ?? false, fork: options.fork ?? false },
          detected.features,
        )
      : [];
    if (!end.launchError && missing.length > 0) {
      end.launchError = { name: "UnsupportedFlag", message: `opencode ${version} does not support ${missing.join(", ")}` };
    }
    const files = checkFiles(options.files ?? [], process.cwd());
    if (!end.launchError && files.error) end.launchError = { name: "FileNotFound", message: files.error };

    let prompt = "";
    if (!end.launchError) {
      try {
        if (typeof options.prompt === "string") prompt = options.prompt;
        else {
          const read = await options.prompt();
          prompt = read.text;
          for (const w of read.warnings) normalizer.warning(w.code, w.message);
        }
        if (prompt.trim() === "") throw new ConfigError("the prompt is empty", "UsageError");
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        end.launchError = { name: error.name, message: error.message };
      }
    }
    let invocation: Invocation | null = null;
    if (!end.launchError && located.ok) {
      try {
        invocation = prepareInvocation(options, normalizer, { binary: located.binary.path, detected: detected!, workspace, prompt, files: files.resolved, env });
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        end.launchError = { name: error.name, message: error.message };
      }
    }
    stopFromSignal();
    if (invocation && !end.launchError && end.stop === null) {
      await runProcess(options, normalizer, end, control, invocation, rawLine);
    }
    if (invocation && !end.launchError) after = await afterTurn(options, normalizer, end, invocation);
  } catch (error) {
    end.internalError = { message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }

  try {
    normalizer.finish();
  } catch (error) {
    end.internalError ??= { message: String(error) };
  }
  const outcome = classifyOutcome(normalizer.facts, end);
  emitter.emit(
    buildResult(normalizer.facts, outcome, {
      durationMs: clock() - startedAt,
      model: after.model ?? options.model ?? null,
      process: end.process,
      costUsd: after.costUsd,
      structuredOutput: after.structuredOutput,
      sessionDeleted: after.sessionDeleted,
    }),
  );
  return result!;
}

type RawLine = { text: string | null };
type Launch = { binary: string; detected: Detected; workspace: string; prompt: string; files: string[]; env: NodeJS.ProcessEnv };
type AfterTurn = { model?: string; costUsd?: number; structuredOutput?: { value: unknown }; sessionDeleted?: boolean };

/** The argv and environment, with the permission policy, extra config and output-schema prompt. */
function prepareInvocation(options: TurnOptions, normalizer: Normalizer, launch: Launch): Invocation {
  const policy = buildPolicy(options.allow ?? [], options.deny ?? []);
  for (const w of policy?.warnings ?? []) normalizer.warning(w.code, w.message);
  const configContent = mergeConfigContent(launch.env.OPENCODE_CONFIG_CONTENT, options.config ?? []);
  const prompt = options.outputSchema ? `${launch.prompt}${schemaInstruction(options.outputSchema)}` : launch.prompt;
  return buildInvocation({
    binary: launch.binary,
    workspace: launch.workspace,
    prompt,
    title: options.title ?? (options.outputSchema ? titleFor(launch.prompt) : null),
    model: options.model ?? null,
    agent: options.agent ?? null,
    variant: options.variant ?? null,
    thinking: options.thinking ?? false,
    session: options.session ?? null,
    continueLast: options.continueLast ?? false,
    fork: options.fork ?? false,
    files: launch.files,
    pure: options.pure ?? false,
    auto: options.auto ?? false,
    permission: policy?.value ?? null,
    configContent,
    baseEnv: launch.env,
    features: launch.detected.features,
  });
}

/** Work after opencode has exited: export, ephemeral delete, output schema, last-message file. */
async function afterTurn(options: TurnOptions, normalizer: Normalizer, end: TurnEnd, invocation: Invocation): Promise<AfterTurn> {
  const facts = normalizer.facts;
  const after: AfterTurn = {};
  const ctx = { binary: invocation.file, env: invocation.env, cwd: invocation.cwd, timeoutMs: DEFAULTS.sessionCommandTimeoutMs };
  const stoppedByUser = end.stop?.kind === "interrupted" || end.stop?.kind === "terminated" || end.stop?.kind === "broken_pipe";
  // opencode's stream never names the model; export does, at the cost of another opencode start,
  // so by default only when the caller did not name the model.
  const wantExport = options.export ?? !options.model;
  if (facts.sessionId && wantExport && !stoppedByUser) {
    const exported = await exportSession(ctx, facts.sessionId);
    if ("error" in exported) normalizer.warning("export_failed", exported.error);
    else {
      if (exported.model) after.model = exported.model;
      if (facts.costUsd === 0 && exported.costUsd) after.costUsd = exported.costUsd;
    }
  }
  if (options.ephemeral) {
    if (!facts.sessionId) after.sessionDeleted = false;
    else {
      const deleted = await deleteSession(ctx, facts.sessionId);
      after.sessionDeleted = deleted === true;
      if (deleted !== true) normalizer.warning("delete_failed", deleted.error);
    }
  }
  if (options.outputSchema && end.stop === null) {
    const check = checkStructuredOutput(options.outputSchema, facts.finalText);
    if ("value" in check) after.structuredOutput = check;
    else end.outputError = check.error;
  }
  if (options.outputLastMessage && facts.finalText !== null) {
    try {
      writeFileAtomic(options.outputLastMessage, facts.finalText);
    } catch (error) {
      normalizer.warning("output_last_message_failed", `could not write --output-last-message ${options.outputLastMessage}: ${(error as Error).message}`);
    }
  }
  return after;
}

async function runProcess(options: TurnOptions, normalizer: Normalizer, end: TurnEnd, control: TurnControl, invocation: Invocation, rawLine: RawLine): Promise<void> {
  const killAfterMs = options.killAfterMs ?? DEFAULTS.killAfterMs;
  const budgets = { maxSteps: options.maxSteps ?? null, maxTokens: options.maxTokens ?? null, maxCostUsd: options.maxCostUsd ?? null };
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
    <T,>(handle: (value: T) => void) =>
    (value: T) => {
      try {
        handle(value);
      } catch (error) {
        end.internalError ??= { message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
        stop({ kind: "internal" });
      }
    };

  const stdout = new LineSplitter(guard((line) => {
    timers.activity();
    rawLine.text = line.truncated ? null : line.text;
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
  }), options.maxLineBytes ?? DEFAULTS.maxLineBytes);
  // Some releases (1.0) report a configuration error on stderr and then wait forever; when that
  // happens before any JSON event, give opencode a moment, then stop it.
  let configGrace: NodeJS.Timeout | null = null;
  const stderr = new LineSplitter(guard((line) => {
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
  }), STDERR_MAX_LINE);

  const running = startProcess(invocation, { stdout: (c) => stdout.push(c), stderr: (c) => stderr.push(c) });
  timers.start();
  const unsubscribe = control.subscribe(stop);
  if (control.reason) stop(control.reason);

  try {
    const ended = await running.done;
    stdout.end();
    stderr.end();
    if (ended.spawnError) end.launchError = { name: "SpawnError", message: `could not start opencode at ${invocation.file}: ${ended.spawnError}` };
    else end.process = { exitCode: ended.exitCode, signal: ended.signal };
  } finally {
    timers.clear();
    if (killTimer) clearTimeout(killTimer);
    if (configGrace) clearTimeout(configGrace);
    unsubscribe();
  }
}
