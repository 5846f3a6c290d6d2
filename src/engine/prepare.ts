// The one prologue every turn runs before its backend opens it, whatever the backend: write
// run.started, check the workspace, the backend's own problem and its checks, the files and the
// last-message file (planned: see domain/output/last-message.ts), read the prompt and build the permission policy, then ask the backend to open the
// turn. Returns the opened turn, or the problem that stops it before it starts (config_error).

import { titleFor } from "../domain/opencode/invocation.js";
import { ConfigError } from "../domain/outcome/errors.js";
import { planLastMessage } from "../domain/output/last-message.js";
import type { LaunchProblem } from "../kernel/problem.js";
import type { ResolvedTurn, TurnSettings } from "../plan/resolve-options.js";
import { notADirectory, notAFile, unwritableFile } from "../sys/fs-checks.js";
import { type PlannedWrite, planWrite } from "../sys/safe-write.js";
import type { Backend, OpenedTurn, TurnInput } from "./backend.js";
import { outputSchemaProblem, schemaInstruction } from "./structured-output.js";
import type { TurnCore } from "./turn-core.js";
import { dropPatchBase, type PatchBase, takePatchBase } from "./workspace/turn-patch.js";

/** run.started, with what the backend says of opencode (nothing, when it was never ready). */
export function announceTurn(options: ResolvedTurn, core: TurnCore, backend: Backend | null): void {
  core.started({
    opencode: backend?.opencode ?? { path: null, version: null },
    cwd: backend?.remote ? (backend.remote.dir ?? "~") : options.placement.dir,
    model: options.turn.model,
    agent: options.turn.agent?.name ?? null,
    resume: options.session.id,
    ...(backend?.sandbox ? { sandbox: backend.sandbox } : {}),
    ...(backend?.acp ? { acp: backend.acp } : {}),
  });
}

export async function prepareTurn(
  options: ResolvedTurn,
  core: TurnCore,
  backend: Backend,
): Promise<
  | (OpenedTurn & {
      input: TurnInput;
      output: PlannedWrite | null;
      patchBase: PatchBase | null;
      patch: PlannedWrite | null;
    })
  | { problem: LaunchProblem }
> {
  announceTurn(options, core, backend);
  const dirProblem = backend.remote ? null : notADirectory(options.placement.dir);
  if (dirProblem)
    return {
      problem: {
        name: "WorkspaceError",
        message: `${options.placement.names.dir} ${options.placement.dir} ${dirProblem}`,
      },
    };
  if (backend.problem) return { problem: backend.problem };
  const checked = backend.check(options);
  for (const w of checked.warnings) core.normalizer.warning(w.code, w.message);
  if (checked.problem) return { problem: checked.problem };
  const pathsProblem = turnPathProblem(options, backend.remote !== undefined);
  if (pathsProblem) return { problem: pathsProblem };
  // A schema that cannot check the answer is found now, not after the turn is paid for.
  const schemaProblem = options.turn.outputSchema ? outputSchemaProblem(options.turn.outputSchema.schema) : null;
  if (schemaProblem)
    return {
      problem: {
        name: "OutputSchemaError",
        message: `${options.turn.outputSchema!.option} is not a JSON Schema ajv can use: ${schemaProblem}`,
      },
    };
  let patchBase: PatchBase | null = null;
  // The last-message file, planned now: after the turn it is written only where it was planned.
  const output = options.turn.outputLastMessage
    ? planLastMessage(options.turn.outputLastMessage.path, options.turn.outputLastMessage.option)
    : null;
  if (output && "problem" in output) return output;
  // The patch file likewise (--output-patch), planned where its check above found it writable.
  const patch = options.turn.outputPatch ? planWrite(options.turn.outputPatch.path, { probe: true }) : null;
  if (patch && "problem" in patch)
    return {
      problem: {
        name: "OutputPathError",
        message: `${options.turn.outputPatch!.option} ${options.turn.outputPatch!.path}: ${patch.problem}`,
      },
    };
  try {
    const input = await readTurnInput(options, core);
    if ("problem" in input) return input;
    // The workspace as it is before opencode starts, for --output-patch.
    if (options.turn.outputPatch) {
      const taken = takePatchBase(options.placement.dir, options.turn.outputPatch.exclude);
      if ("problem" in taken)
        return {
          problem: {
            name: "OutputPathError",
            message: `${options.turn.outputPatch.option} ${options.turn.outputPatch.path}: ${taken.problem}`,
          },
        };
      patchBase = taken;
    }
    const opened = await backend.open(options, input);
    if ("problem" in opened) return opened;
    const ready = { ...opened, input, output, patchBase, patch };
    patchBase = null;
    return ready;
  } finally {
    // Not handed on: the turn does not start.
    if (patchBase) dropPatchBase(patchBase);
  }
}

/** The files to attach, checked before the turn starts. */
function turnPathProblem(options: ResolvedTurn, remote: boolean): LaunchProblem | null {
  // Over ssh the files are on the host: opencode there says if one is missing.
  for (const file of remote ? [] : options.turn.files.paths) {
    const fileProblem = notAFile(file);
    if (fileProblem) return { name: "FileNotFound", message: `${options.turn.files.option} ${file} ${fileProblem}` };
  }
  if (options.turn.outputPatch) {
    const { path, option: label } = options.turn.outputPatch;
    // The patch is made from the workspace on this machine; over ssh it is on the host.
    if (remote)
      return {
        name: "OutputPathError",
        message: `${label} needs the workspace on this machine; it cannot go with ssh`,
      };
    const problem = unwritableFile(path);
    if (problem) return { name: "OutputPathError", message: `${label} ${path}: ${problem}` };
  }
  return null;
}

/** Reads the prompt and takes the plan's permission policy; or what the caller must fix. */
async function readTurnInput(options: ResolvedTurn, core: TurnCore): Promise<TurnInput | { problem: LaunchProblem }> {
  let read: Awaited<ReturnType<TurnSettings["prompt"]>>;
  try {
    read = await options.turn.prompt();
  } catch (error) {
    // The CLI's prompt reader is its file-reading edge (a prompt file, stdin): a ConfigError there
    // is what the caller must fix; anything else is a bug.
    if (!(error instanceof ConfigError)) throw error;
    return { problem: { name: error.name, message: error.message } };
  }
  for (const w of read.warnings) core.normalizer.warning(w.code, w.message);
  if (read.text.trim() === "") return { problem: { name: "UsageError", message: "the prompt is empty" } };
  const { policy } = options.placement;
  if ("problem" in policy) return policy;
  for (const w of policy.warnings) core.normalizer.warning(w.code, w.message);
  return {
    prompt: options.turn.outputSchema ? `${read.text}${schemaInstruction(options.turn.outputSchema)}` : read.text,
    title: options.session.title ?? (options.turn.outputSchema ? titleFor(read.text) : null),
    policy: policy.value,
  };
}
