// Where the prompt comes from: arguments, --prompt-file, and stdin when it is not a terminal,
// combined in that order with blank lines between. A pipe that never closes must not hang us:
// with a prompt already given, stdin gets --stdin-timeout to send its first byte.
import { readFileSync } from "node:fs";
import { ConfigError } from "../domain/outcome/errors.js";
import { formatDuration } from "../kernel/duration.js";
import type { Warning } from "../kernel/problem.js";

export type PromptInputs = {
  args: string[];
  promptFile: string | null;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; destroy?: () => void };
  stdinTimeoutMs: number;
  /** -n/--no-stdin: stdin is left alone, as if it were a terminal. */
  noStdin?: boolean;
};

export type PromptRead = { text: string; warnings: Warning[] };

/** Resolves with the first chunk, null at end of input, or "timeout". */
function firstChunk(stdin: NodeJS.ReadableStream, timeoutMs: number | null): Promise<Buffer | null | "timeout"> {
  return new Promise((resolve) => {
    const done = (value: Buffer | null | "timeout") => {
      if (timer) clearTimeout(timer);
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      stdin.off("error", onEnd);
      stdin.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer | string) => done(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    const onEnd = () => done(null);
    const timer = timeoutMs === null ? null : setTimeout(() => done("timeout"), timeoutMs);
    stdin.on("data", onData);
    stdin.once("end", onEnd);
    stdin.once("error", onEnd);
    stdin.resume();
  });
}

async function readRest(stdin: NodeJS.ReadableStream & { readableEnded?: boolean }, first: Buffer): Promise<string> {
  const parts = [first];
  // A stream whose whole content came in the first chunk may already have emitted 'end' (it does
  // so while paused once nothing is left): waiting for it again would wait forever.
  if (stdin.readableEnded) return first.toString("utf8");
  await new Promise<void>((resolve) => {
    stdin.on("data", (chunk: Buffer | string) => parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)));
    stdin.once("end", () => resolve());
    stdin.once("error", () => resolve());
    stdin.resume();
  });
  return Buffer.concat(parts).toString("utf8");
}

export async function readPrompt(inputs: PromptInputs): Promise<PromptRead> {
  const warnings: PromptRead["warnings"] = [];
  const dashOnly = inputs.args.length === 1 && inputs.args[0] === "-";
  const parts: string[] = [];
  if (!dashOnly && inputs.args.length > 0) parts.push(inputs.args.join(" "));
  if (inputs.promptFile) {
    try {
      parts.push(readFileSync(inputs.promptFile, "utf8"));
    } catch (error) {
      throw new ConfigError(
        `--prompt-file ${inputs.promptFile}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`,
        "UsageError",
      );
    }
  }
  const head = parts.filter((p) => p.trim() !== "").join("\n\n");
  // A prompt file with nothing in it is named, not blamed on stdin.
  const emptyFile =
    inputs.promptFile && head === "" ? `--prompt-file ${inputs.promptFile} is empty (or only white space)` : null;
  if (inputs.stdin.isTTY || inputs.noStdin) {
    const why = inputs.noStdin ? "--no-stdin was given" : "stdin is a terminal; pipe the prompt in";
    if (dashOnly) throw new ConfigError(`the prompt - means read stdin, but ${why}`, "UsageError");
    if (head === "")
      throw new ConfigError(
        emptyFile
          ? `the prompt is empty: ${emptyFile}`
          : inputs.args.length > 0
            ? "the prompt is empty: the prompt argument is only white space"
            : `no prompt: pass it as arguments${inputs.noStdin ? " or" : ","} with --prompt-file FILE${inputs.noStdin ? "" : ", or on stdin"}`,
        "UsageError",
      );
    return { text: head, warnings };
  }
  // With a prompt in hand, stdin is optional and may be a pipe nobody will ever write to.
  const wait = dashOnly || head === "" ? null : inputs.stdinTimeoutMs;
  const first = await firstChunk(inputs.stdin, wait);
  if (first === "timeout") {
    inputs.stdin.destroy?.();
    warnings.push({
      code: "stdin_timeout",
      message: `stdin is not a terminal but sent nothing within --stdin-timeout ${formatDuration(inputs.stdinTimeoutMs, "exact")}; going on with the prompt from the arguments only`,
    });
    return { text: head, warnings };
  }
  const stdinText = first === null ? "" : await readRest(inputs.stdin, first);
  if (head === "") {
    // A prompt argument that is only white space ("$EMPTY_VAR") was given: say that, not that none was.
    const given = !dashOnly && inputs.args.length > 0;
    if (stdinText.trim() === "")
      throw new ConfigError(
        emptyFile
          ? `the prompt is empty: ${emptyFile}, and stdin was empty`
          : given
            ? "the prompt is empty: the prompt argument is only white space, and stdin was empty"
            : "no prompt: stdin was empty and no prompt argument was given",
        "UsageError",
      );
    return { text: stdinText, warnings };
  }
  return { text: stdinText.trim() === "" ? head : `${head}\n\n${stdinText}`, warnings };
}
