// The offline commands: `replay` re-runs the normalizer and classifier over a saved opencode
// stream; `validate` checks a saved oc-exec stream against the published contract.
import { createReadStream, existsSync, openSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { EXIT_CODES } from "../contract/exit-codes.js";
import { validateStream } from "../contract/validate-stream.js";
import { ConfigError } from "../domain/outcome/errors.js";
import { createStdoutWriter, writeStdoutText } from "../domain/output/stdout-writer.js";
import { createReporter } from "../domain/progress/reporter.js";
import { openReplay, type Replay } from "../engine/replay.js";
import { parseCount } from "./duration.js";

async function readInput(file: string, stdin: NodeJS.ReadableStream): Promise<Buffer> {
  if (file !== "-") {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new ConfigError(
        `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        "UsageError",
      );
    }
  }
  const parts: Buffer[] = [];
  for await (const chunk of stdin) parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(parts);
}

/** The file (or stdin for -) as a stream of chunks; a file that cannot be read is a usage error. */
function openInput(file: string, stdin: NodeJS.ReadableStream): AsyncIterable<Buffer> {
  if (file === "-") return stdin as AsyncIterable<Buffer>;
  try {
    const fd = openSync(file, "r");
    return createReadStream("", { fd, highWaterMark: 256 * 1024 });
  } catch (error) {
    throw new ConfigError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      "UsageError",
    );
  }
}

/**
 * The recording, read as it was, once its first chunk shows it is one replay can use: not empty (an
 * empty file with no stderr beside it is nothing opencode printed, not a turn that printed nothing),
 * and not an oc-exec stream (validate checks those; replay would call every line unknown).
 */
async function checkedRecording(
  input: AsyncIterable<Buffer>,
  file: string,
  stderrFile: string | null,
): Promise<AsyncIterable<Buffer>> {
  const iterator = input[Symbol.asyncIterator]();
  let first = await iterator.next();
  while (!first.done && first.value.length === 0) first = await iterator.next();
  if (first.done && stderrFile === null)
    throw new ConfigError(
      `${file} is empty: there is no opencode output to replay (no opencode ran here; replay reads a saved opencode stream)`,
      "UsageError",
    );
  const head = first.done ? "" : first.value.toString("utf8", 0, Math.min(first.value.length, 64 * 1024));
  const line = head.split("\n").find((l) => l.trim() !== "") ?? "";
  try {
    const event = JSON.parse(line) as { type?: unknown; schema_version?: unknown };
    if (event.type === "run.started" && event.schema_version !== undefined)
      throw new ConfigError(
        `${file} is an oc-exec stream (it starts with run.started, schema_version ${JSON.stringify(event.schema_version)}): check it with oc-exec validate ${file}; replay reads opencode's own output (opencode run --format json, or an OC_EXEC_RECORD_EVENTS file)`,
        "UsageError",
      );
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    // Not JSON on the first line: replay reports it as opencode's output, line by line.
  }
  return {
    async *[Symbol.asyncIterator]() {
      if (!first.done) yield first.value;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    },
  };
}

type ReplayFlags = {
  stderr?: string;
  exitCode?: string;
  signal?: string;
  dir?: string;
  quiet?: boolean;
  textDeltas?: boolean;
};

export async function replayCommand(
  file: string,
  flags: ReplayFlags,
  io: { stdin: NodeJS.ReadableStream; stderr: NodeJS.WriteStream; env: NodeJS.ProcessEnv },
): Promise<number> {
  let stdoutFile = file;
  let stderrFile = flags.stderr ?? null;
  let meta: { exit_code?: number | null; signal?: string | null; opencode_version?: string; session_id?: string } = {};
  if (file !== "-" && existsSync(file) && statSync(file).isDirectory()) {
    // A run recording has stdout.txt (and stderr.txt); a server recording its events.jsonl.
    const events = join(file, "events.jsonl");
    stdoutFile = existsSync(events) && !existsSync(join(file, "stdout.txt")) ? events : join(file, "stdout.txt");
    if (!stderrFile && existsSync(join(file, "stderr.txt"))) stderrFile = join(file, "stderr.txt");
    if (existsSync(join(file, "meta.json")))
      meta = JSON.parse(readFileSync(join(file, "meta.json"), "utf8")) as typeof meta;
  }
  // Opened before anything is written: a file that cannot be read is a usage error with no events.
  const stderrInput = stderrFile ? openInput(stderrFile, io.stdin) : null;
  const stdoutInput = await checkedRecording(openInput(stdoutFile, io.stdin), stdoutFile, stderrFile);
  const reporter = await createReporter({
    quiet: flags.quiet ?? false,
    verbose: false,
    color: "auto",
    stream: io.stderr,
    env: io.env,
  });
  const writer = createStdoutWriter();
  let behind = false;
  const replay = openReplay(
    {
      exitCode: flags.exitCode !== undefined ? parseCount(flags.exitCode, "--exit-code") : (meta.exit_code ?? 0),
      signal: flags.signal ?? meta.signal ?? null,
      opencodeVersion: meta.opencode_version ?? null,
      serverSession: meta.session_id,
      deltas: flags.textDeltas ?? false,
      // file.changed paths are relative to the recorded workspace, not to wherever replay runs.
      workspace: flags.dir === undefined ? undefined : resolve(flags.dir),
    },
    (event) => {
      if (!writer.write(event)) behind = true;
      reporter.event(event);
    },
  );
  // Streamed, chunk by chunk, so memory stays flat with the recording's size; a reader slower than
  // the replay holds it back. stderr first: the order of two pipes is not recorded.
  const feed = async (input: AsyncIterable<Buffer>, into: Replay["stdout"]) => {
    for await (const chunk of input) {
      into.push(chunk as Buffer);
      if (behind) {
        behind = false;
        await writer.drained();
      }
    }
    into.end();
  };
  if (stderrInput) await feed(stderrInput, replay.stderr);
  else replay.stderr.end();
  await feed(stdoutInput, replay.stdout);
  const result = replay.finish();
  reporter.stop();
  return result.exit_code;
}

export async function validateCommand(
  file: string,
  flags: { json?: boolean },
  io: { stdin: NodeJS.ReadableStream; stderr: NodeJS.WriteStream },
): Promise<number> {
  const text = (await readInput(file, io.stdin)).toString("utf8");
  const { events, problems } = validateStream(text.split("\n"));
  if (flags.json)
    writeStdoutText(`${JSON.stringify({ ok: problems.length === 0, events: events.length, problems })}\n`);
  for (const p of problems) io.stderr.write(`${file}${p.line === null ? "" : `:${p.line}`}: ${p.message}\n`);
  io.stderr.write(
    problems.length === 0
      ? `${file}: ${events.length} events, valid\n`
      : `${file}: ${problems.length} problem(s) in ${events.length} events\n`,
  );
  return problems.length === 0 ? EXIT_CODES.success : EXIT_CODES.agent_error;
}
