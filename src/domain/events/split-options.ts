// How opencode's two pipes are split into lines: the same live (process backend) and in replay.
import type { SplitterOptions } from "./line-splitter.js";
import { keepBytesFor } from "./output-cutter.js";

/** stderr lines are only read for errors and shown with --verbose; a megabyte is plenty. */
const STDERR_MAX_LINE = 1024 * 1024;

export function splitterOptions(
  maxLineBytes: number,
  maxOutputBytes: number,
): { stdout: SplitterOptions; stderr: SplitterOptions } {
  return {
    stdout: { maxLineBytes, outputKeepBytes: keepBytesFor(maxOutputBytes) },
    stderr: { maxLineBytes: STDERR_MAX_LINE },
  };
}
