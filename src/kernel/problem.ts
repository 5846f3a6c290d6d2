// The two small values every layer passes up instead of throwing: a problem that stops a turn
// before it starts (class config_error, exit 5), and a warning the run carries into its events.
import type { WarningCode } from "../contract/warning-codes.js";

/** Why a turn cannot start (class config_error, exit 5): a name for scripts and a message for people. */
export type LaunchProblem = { name: string; message: string };

export type Warning = { code: WarningCode; message: string };
