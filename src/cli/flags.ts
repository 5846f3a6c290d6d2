// Flags in, options out: what the command line gives, as the library's options plus the few
// settings only the CLI has (prompt sources, progress display). Defaults are not applied here:
// resolveTurnOptions owns them, so an unset flag stays undefined.

import { ConfigError } from "../domain/outcome/errors.js";
import type { OptionLabels } from "../domain/outcome/labels.js";
import type { RunTurnOptions } from "../plan/options.js";
import { parseDurationFlag } from "./duration.js";
import { ALL_OPTION_FLAGS, FLAG_LABELS, type TableFlags, tableOptions, WORK_FLAGS } from "./flag-table.js";
import { parseMcp, readConfigFile } from "./flag-values.js";
import { type LimitFlags, limitLabels, limitOptions } from "./limit-flags.js";

/** The sandbox's, the checks' and the attempts' flags: a turn's and a batch's, worded once (program.ts). */
export type WorkFlags = TableFlags<(typeof WORK_FLAGS)[number]> & { sandbox?: string };

/** Those flags as the library's options (the resolver checks what they say). */
export const workOptions = (flags: WorkFlags) => tableOptions(flags, WORK_FLAGS);

/** commander's fields for a turn: the table's flags, the limits', and the CLI's own. */
export type RawFlags = TableFlags &
  LimitFlags<""> &
  LimitFlags<"turn-"> & {
    sandbox?: string;
    auto?: boolean;
    fullAuto?: boolean;
    dangerouslySkipPermissions?: boolean;
    config?: string[];
    mcp?: string[];
    /** false for --no-export (commander's negatable flag: true otherwise). */
    export?: boolean;
    promptFile?: string;
    stdinTimeout?: string;
    /** false for -n/--no-stdin (commander's negatable flag: true otherwise). */
    stdin?: boolean;
    quiet?: boolean;
    verbose?: boolean;
    timestamps?: boolean;
    color?: "auto" | "always" | "never";
    version?: boolean;
    rehearse?: string;
    junit?: string;
    inputFormat?: "text" | "jsonl";
  };

/** --sandbox as given (the resolver checks the word), or workspace-write for --full-auto. */
function sandboxFlag(flags: RawFlags): RunTurnOptions["sandbox"] {
  if (flags.fullAuto && flags.sandbox !== undefined && flags.sandbox !== "workspace-write")
    throw new ConfigError(
      `--full-auto means --sandbox workspace-write --auto; it cannot go with --sandbox ${flags.sandbox}`,
      "UsageError",
    );
  return (flags.fullAuto ? "workspace-write" : flags.sandbox) as RunTurnOptions["sandbox"];
}

/** How a batch names the options of tasks whose lines do not set them: by the flag that gave the default. */
export const TASK_FLAG_LABELS: OptionLabels = { ...FLAG_LABELS, ...limitLabels("task-") };

/** The CLI's own settings: where the prompt comes from and how progress is shown. */
export type CliSettings = {
  args: string[];
  promptFile: string | null;
  /** With a prompt argument, how long piped stdin has to send its first byte. */
  stdinTimeoutMs: number;
  /** -n/--no-stdin: stdin is never read (it belongs to a loop around oc-exec). */
  noStdin: boolean;
  display: Display;
  /** --junit FILE: a JUnit XML report of the run, or null. */
  junit: string | null;
};

export type Display = {
  quiet: boolean;
  verbose: boolean;
  timestamps: boolean;
  color: "auto" | "always" | "never";
};

export const STDIN_TIMEOUT_DEFAULT = "5s";
/**
 * How long a server from `oc-exec server start` waits without a turn before it stops itself: long
 * enough for the gaps between a script's steps, short enough that a script that failed before
 * `server stop` does not leave ~600 MB of opencode running for the rest of the day.
 */
export const SERVER_IDLE_DEFAULT = "15m";

export function displayFrom(flags: RawFlags): Display {
  return {
    quiet: flags.quiet ?? false,
    verbose: flags.verbose ?? false,
    timestamps: flags.timestamps ?? false,
    color: flags.color ?? "auto",
  };
}

/** --quiet as typed, for a command line that did not parse (a usage error is quiet too). */
export function quietRequested(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === "-q" || a === "--quiet" || /^-[a-zA-Z]*q/.test(a));
}

export function optionsFromFlags(
  flags: RawFlags,
  args: string[],
): { options: Omit<RunTurnOptions, "prompt" | "env">; cli: CliSettings } {
  const config = [...(flags.config ?? []).map(readConfigFile), ...(flags.mcp ?? []).map(parseMcp)];
  const sandbox = sandboxFlag(flags);
  return {
    options: {
      ...tableOptions(flags, ALL_OPTION_FLAGS),
      auto: flags.auto || flags.dangerouslySkipPermissions || flags.fullAuto || undefined,
      sandbox,
      config: config.length > 0 ? config : undefined,
      ...limitOptions(flags, ""),
      // commander sets export=false for --no-export and leaves it true otherwise: only "off" is news.
      export: flags.export === false ? false : undefined,
    },
    cli: {
      args,
      promptFile: flags.promptFile ?? null,
      stdinTimeoutMs: parseDurationFlag(flags.stdinTimeout ?? STDIN_TIMEOUT_DEFAULT, "--stdin-timeout"),
      noStdin: flags.stdin === false,
      display: displayFrom(flags),
      junit: flags.junit ?? null,
    },
  };
}
