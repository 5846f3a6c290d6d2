// Work after opencode has exited and before the result is written: the invocation is prepared
// here too, since both depend on the same options (policy, extra config, output schema).
import { mergeConfigContent } from "../opencode/config-content.js";
import { buildInvocation, titleFor, type Invocation } from "../opencode/invocation.js";
import { buildPolicy } from "../opencode/permissions.js";
import { deleteSession, exportSession } from "../opencode/session-commands.js";
import type { Detected } from "../opencode/version.js";
import type { Normalizer } from "../events/normalize.js";
import type { TurnEnd } from "../outcome/classify.js";
import { writeFileAtomic } from "../output/last-message.js";
import { DEFAULTS, type TurnOptions } from "./options.js";
import { checkStructuredOutput, schemaInstruction } from "./structured-output.js";

export type Launch = {
  binary: string;
  detected: Detected;
  workspace: string;
  prompt: string;
  files: string[];
  env: NodeJS.ProcessEnv;
};
export type AfterTurn = {
  model?: string;
  costUsd?: number;
  structuredOutput?: { value: unknown };
  sessionDeleted?: boolean;
};

/** The argv and environment, with the permission policy, extra config and output-schema prompt. */
export function prepareInvocation(options: TurnOptions, normalizer: Normalizer, launch: Launch): Invocation {
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
export async function afterTurn(
  options: TurnOptions,
  normalizer: Normalizer,
  end: TurnEnd,
  invocation: Invocation,
): Promise<AfterTurn> {
  const facts = normalizer.facts;
  const after: AfterTurn = {};
  const ctx = {
    binary: invocation.file,
    env: invocation.env,
    cwd: invocation.cwd,
    timeoutMs: DEFAULTS.sessionCommandTimeoutMs,
  };
  const stoppedByUser =
    end.stop?.kind === "interrupted" || end.stop?.kind === "terminated" || end.stop?.kind === "broken_pipe";
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
      normalizer.warning(
        "output_last_message_failed",
        `could not write --output-last-message ${options.outputLastMessage}: ${(error as Error).message}`,
      );
    }
  }
  return after;
}
