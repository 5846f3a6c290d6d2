// Runs one turn from start to `result`: locate opencode, write run.started, read the prompt,
// run the process (run-process.ts), the work after it (around-turn.ts), then the result
// (turn-core.ts, shared with replay).
// Every path ends in exactly one result event, including bugs in this file.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { OcEvent, ResultEvent } from "../events/schema.js";
import { TESTED_RANGE } from "../opencode/features.js";
import { unsupportedFlags, type Invocation } from "../opencode/invocation.js";
import { locateOpencode, type LocateResult } from "../opencode/locate.js";
import { detectOpencode } from "../opencode/version.js";
import type { TurnEnd } from "../outcome/classify.js";
import { ConfigError } from "../outcome/errors.js";
import { afterTurn, prepareInvocation, type AfterTurn } from "./around-turn.js";
import { TurnControl } from "./control.js";
import { DEFAULTS, type TurnOptions } from "./options.js";
import { runProcess } from "./run-process.js";
import { createTurnCore } from "./turn-core.js";

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

function launchProblem(
  options: TurnOptions,
  located: LocateResult,
  workspace: string,
): { name: string; message: string } | null {
  if (options.launchError) return options.launchError;
  const dirError = checkWorkspace(workspace);
  if (dirError) return { name: "WorkspaceError", message: dirError };
  if (!located.ok) return { name: "OpencodeNotFound", message: located.message };
  return null;
}

export async function executeTurn(
  options: TurnOptions,
  sink: (event: OcEvent) => void,
  control = new TurnControl(),
): Promise<ResultEvent> {
  control.follow(options.signal);
  const env = options.env ?? process.env;
  const workspace = resolve(options.dir ?? process.cwd());
  let after: AfterTurn = {};
  const core = createTurnCore(
    {
      workspace,
      resume: options.session ?? null,
      continuing: options.continueLast ?? false,
      fork: options.fork ?? false,
      maxOutputBytes: options.maxOutputBytes ?? DEFAULTS.maxOutputBytes,
      maxLineBytes: options.maxLineBytes ?? DEFAULTS.maxLineBytes,
      includeRaw: options.includeRaw,
      clock: options.clock,
    },
    sink,
  );
  const { normalizer } = core;
  const end: TurnEnd = { stop: null, launchError: null, internalError: null, process: null };
  const stopFromSignal = () => {
    end.stop ??= control.reason;
  };

  try {
    const located = locateOpencode(options.opencode ?? env.OC_EXEC_OPENCODE ?? null, env.PATH);
    const detected = located.ok ? await detectOpencode(located.binary, env) : null;
    const version = detected?.version ?? null;
    core.started({
      opencode: { path: located.ok ? located.binary.path : located.path, version },
      cwd: workspace,
      model: options.model ?? null,
      agent: options.agent ?? null,
      resume: options.session ?? null,
    });
    end.launchError = launchProblem(options, located, workspace);
    if (detected && !detected.tested) {
      normalizer.warning(
        "untested_opencode",
        `opencode ${version ?? "of unknown version"} is not a release oc-exec was tested with (${TESTED_RANGE}); its output may differ`,
      );
    }
    const missing = detected
      ? unsupportedFlags(
          {
            variant: options.variant ?? null,
            thinking: options.thinking ?? false,
            pure: options.pure ?? false,
            auto: options.auto ?? false,
            fork: options.fork ?? false,
          },
          detected.features,
        )
      : [];
    if (!end.launchError && missing.length > 0) {
      end.launchError = {
        name: "UnsupportedFlag",
        message: `opencode ${version} does not support ${missing.join(", ")}`,
      };
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
        invocation = prepareInvocation(options, normalizer, {
          binary: located.binary.path,
          detected: detected!,
          workspace,
          prompt,
          files: files.resolved,
          env,
        });
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        end.launchError = { name: error.name, message: error.message };
      }
    }
    stopFromSignal();
    if (invocation && !end.launchError && end.stop === null) {
      await runProcess(options, normalizer, end, control, invocation, core.rawLine);
    }
    if (invocation && !end.launchError) after = await afterTurn(options, normalizer, end, invocation);
  } catch (error) {
    end.internalError = { message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }

  return core.finish(end, {
    model: after.model ?? options.model ?? null,
    costUsd: after.costUsd,
    structuredOutput: after.structuredOutput,
    sessionDeleted: after.sessionDeleted,
  });
}
