// The offline commands: `replay` re-runs the normalizer and classifier over a saved opencode
// stream; `validate` checks a saved oc-exec stream against the published contract.
import { createReadStream, existsSync, openSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { EXIT_CODES } from "../contract/exit-codes.js";
import { validateStream } from "../contract/validate-stream.js";
import { ConfigError } from "../outcome/errors.js";
import { createStdoutWriter, writeStdoutText } from "../output/stdout-writer.js";
import { createReporter } from "../progress/reporter.js";
import { openReplay, type Replay } from "../replay/replay.js";
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
  const stdoutInput = openInput(stdoutFile, io.stdin);
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
