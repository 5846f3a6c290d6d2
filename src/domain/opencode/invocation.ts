// Builds the opencode invocation: an argv array (never a shell string), an explicit environment,
// and the prompt for the child's stdin. Pure: tested without processes.

import type { Command } from "../../sys/process.js";
import { isTelemetryVariable } from "../telemetry/trace-settings.js";
import { ALL_FEATURES, type Features } from "./features.js";

export type InvocationInput = {
  binary: string;
  workspace: string;
  prompt: string;
  title: string | null;
  model: string | null;
  agent: string | null;
  variant: string | null;
  thinking: boolean;
  session: string | null;
  files: string[];
  pure: boolean;
  /** Approve whatever the permission config does not deny (opencode --auto). */
  auto?: boolean;
  /** Resume the most recent session, or fork the resumed one. */
  continue?: boolean;
  fork?: boolean;
  /** OPENCODE_PERMISSION to set; any inherited value is removed first. null: leave it alone. */
  permission?: Record<string, unknown> | null;
  /** OPENCODE_CONFIG_CONTENT to set (already merged with the inherited value). */
  configContent?: string;
  baseEnv: NodeJS.ProcessEnv;
  /** What the installed opencode accepts; default: everything the pinned release has. */
  features?: Features;
};

/** opencode's command line, environment and input for one turn. */
export type Invocation = Command;

/** A flag the user asked for that this opencode release does not have. */
export function unsupportedFlags(
  input: Pick<InvocationInput, "variant" | "thinking" | "pure" | "auto" | "fork">,
  features: Features,
): string[] {
  const missing: string[] = [];
  if (input.fork && !features.fork) missing.push("--fork");
  if (input.auto && !features.autoFlag) missing.push("--auto");
  if (input.variant && !features.variant) missing.push("--variant");
  if (input.thinking && !features.thinking) missing.push("--thinking");
  if (input.pure && !features.pure) missing.push("--pure");
  return missing;
}

/** Set on every run: a headless turn must not share, self-update or download language servers. */
const MANAGED_ENV: Readonly<Record<string, string>> = {
  OPENCODE_AUTO_SHARE: "false",
  OPENCODE_DISABLE_AUTOUPDATE: "true",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "true",
};

const TITLE_CHARS = 60;

/** A session title from the prompt's first line; passing one skips opencode's title model call. */
export function titleFor(prompt: string): string {
  const first = prompt.trim().split("\n", 1)[0]?.trim() ?? "";
  const title = first.length > TITLE_CHARS ? `${first.slice(0, TITLE_CHARS - 1)}…` : first;
  return title === "" ? "oc-exec turn" : title;
}

export function buildEnv(
  baseEnv: NodeJS.ProcessEnv,
  extra: { permission?: Record<string, unknown> | null; configContent?: string } = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  // opencode exports traces of its own when it sees OTEL_* (its database queries among them): oc-exec
  // exports the turn's, and opencode's would only bury them, so none of it reaches opencode.
  for (const [key, value] of Object.entries(baseEnv))
    if (value !== undefined && !isTelemetryVariable(key)) env[key] = value;
  if (extra.permission) {
    // A policy replaces whatever the caller's environment carried, never merges with it.
    delete env.OPENCODE_PERMISSION;
    env.OPENCODE_PERMISSION = JSON.stringify(extra.permission);
  }
  if (extra.configContent !== undefined) env.OPENCODE_CONFIG_CONTENT = extra.configContent;
  return { ...env, ...MANAGED_ENV };
}

export function buildArgs(
  input: Omit<InvocationInput, "binary" | "baseEnv" | "prompt"> & { prompt?: string },
): string[] {
  const features = input.features ?? ALL_FEATURES;
  const args = ["run", "--format", "json"];
  // 2.x: a private server for this turn, never the shared background service (features.ts).
  if (features.standalone) args.push("--standalone");
  // Releases without --dir take the workspace from the working directory, which we always set.
  if (features.dir) args.push("--dir", input.workspace);
  if (features.title) args.push("--title", input.title ?? titleFor(input.prompt ?? ""));
  // opencode's log on stderr names what its JSON never does: the model of each step, each retry of
  // a failed model call, the permission a tool is about to use (INFO), and the real cause behind an
  // UnknownError's `ref` (ERROR). It costs a few dozen short lines a turn, and no second process.
  if (features.printLogs) args.push("--print-logs", "--log-level", "INFO");
  if (input.model) args.push("--model", input.model);
  if (input.agent) args.push("--agent", input.agent);
  if (input.variant) args.push("--variant", input.variant);
  if (input.thinking) args.push("--thinking");
  if (input.session) args.push("--session", input.session);
  else if (input.continue) args.push("--continue");
  if (input.fork) args.push("--fork");
  if (input.pure) args.push("--pure");
  // 1.14 knows only --dangerously-skip-permissions; 1.18 prefers --auto (and keeps the old name hidden).
  if (input.auto && features.autoFlag) args.push(features.autoFlag);
  for (const file of input.files) args.push("--file", file);
  // No positional message: the prompt goes on stdin, byte for byte and with no size limit.
  return args;
}

export function buildInvocation(input: InvocationInput): Invocation {
  const env = buildEnv(input.baseEnv, { permission: input.permission, configContent: input.configContent });
  // The child runs in the workspace; 2.x takes its root from $PWD before the working directory,
  // and an inherited PWD names the caller's directory, not the workspace.
  env.PWD = input.workspace;
  return { file: input.binary, args: buildArgs(input), env, input: input.prompt, cwd: input.workspace };
}
