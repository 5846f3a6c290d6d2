// What the CLI reads and writes, as one value the entry hands every command: the commands import
// this type, never the entry that dispatches them.
/** What the CLI reads and writes: handed in once, so no command reaches for process.* itself. */
export type CliIo = {
  argv: string[];
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadStream;
  /** Written only through domain/output/stdout-writer.ts: JSONL events, or text a command was asked for. */
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
};
