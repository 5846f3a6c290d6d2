// The CLI entry: commander parses and dispatches (parseAsync, one action per command); every
// command returns its exit status, and only bin/oc-exec.js sets process.exitCode.
import { CommanderError } from "commander";
import { EXIT_CODES } from "../contract/exit-codes.js";
import { ConfigError } from "../domain/outcome/errors.js";
import { writeStdoutText } from "../domain/output/stdout-writer.js";
import { displayFrom, quietRequested, type RawFlags } from "./flags.js";
import type { CliIo } from "./io.js";
import { type Actions, buildProgram } from "./program.js";
import { rewriteResume } from "./resume.js";

const defaultIo = (): CliIo => ({
  argv: process.argv.slice(2),
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});

const HELP_CODES = new Set(["commander.helpDisplayed", "commander.help", "commander.version"]);
const BATCH_COMMANDS = new Set(["batch", "merge"]);

/** A batch or merge that could not run still ends its stream with a batch.result naming why. */
async function batchCouldNotRun(problem: string, io: CliIo): Promise<number> {
  const { batchNotRun } = await import("./batch-command.js");
  return batchNotRun([problem], null, io);
}

export async function main(io: CliIo = defaultIo()): Promise<number> {
  let status: number = EXIT_CODES.success;
  // Commands whose stdout is not one turn's stream: a ConfigError is a message on stderr and exit 5
  // (for batch and merge, whose streams end with a batch.result, also that summary naming it).
  const offline = async (name: "replay" | "validate" | "batch" | "merge", run: () => Promise<number>) => {
    try {
      status = await run();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      io.stderr.write(`oc-exec ${name}: ${error.message}\n`);
      status = BATCH_COMMANDS.has(name) ? await batchCouldNotRun(error.message, io) : EXIT_CODES.config_error;
    }
  };
  // Each command is loaded when it runs: --help and usage errors do not pay for execa and the turn.
  const actions: Actions = {
    async turn(prompt, flags) {
      if ((flags as RawFlags).version) {
        const { printVersions } = await import("./versions.js");
        status = await printVersions(io.env, (flags as RawFlags).opencode);
        return;
      }
      const { turnCommand } = await import("./turn-command.js");
      status = await turnCommand(prompt, flags as RawFlags, io);
    },
    async schema() {
      const { renderJsonSchema } = await import("../contract/json-schema.js");
      writeStdoutText(renderJsonSchema(), io.stdout);
    },
    replay: (file, flags) =>
      offline("replay", async () => (await import("./offline.js")).replayCommand(file, flags, io)),
    validate: (file, flags) =>
      offline("validate", async () => (await import("./offline.js")).validateCommand(file, flags, io)),
    batch: (file, flags) =>
      offline("batch", async () => (await import("./batch-command.js")).batchCommand(file, flags, io)),
    merge: (files, flags) =>
      offline("merge", async () => (await import("./merge-command.js")).mergeCommand(files, flags, io)),
    async server(command, args, flags) {
      const { serverCommand } = await import("./server-command.js");
      status = await serverCommand(command, args, flags, io);
    },
    async scriptedModel() {
      const { scriptedModelCommand } = await import("./scripted-command.js");
      status = await scriptedModelCommand(io);
    },
    async doctor(flags) {
      const { doctorCommand } = await import("./doctor.js");
      status = await doctorCommand(flags, io);
    },
  };
  const program = buildProgram(
    { writeOut: (s) => writeStdoutText(s, io.stdout), writeErr: (s) => io.stderr.write(s) },
    actions,
  );
  // The turn's options given before a subcommand are parsed as the turn's and never reach the
  // subcommand (`oc-exec --max-cost-usd 0.5 batch t.jsonl` ran with no budget): refused, exit 5.
  let misplaced: string | null = null;
  program.hook("preAction", (_program, action) => {
    if (action === program) return;
    const path: string[] = [];
    for (let c: typeof action | null = action; c && c !== program; c = c.parent) path.unshift(c.name());
    const subcommand = path.join(" ");
    const given = program.options
      .filter((o) => program.getOptionValueSource(o.attributeName()) === "cli")
      .map((o) => o.long ?? o.short ?? o.flags);
    if (given.length === 0) return;
    misplaced = subcommand;
    throw new ConfigError(
      `${given.join(", ")} ${given.length === 1 ? "was" : "were"} given before \`${subcommand}\`, where ${given.length === 1 ? "it" : "they"} would not apply to it: put ${given.length === 1 ? "it" : "them"} after \`${subcommand}\` (oc-exec ${subcommand} --help lists what it takes)`,
      "UsageError",
    );
  });
  const argv = rewriteResume(io.argv, program);
  // `help nosuch` printed the whole help and exited 0: a script's typo passed as success.
  const [first, asked] = argv;
  if (first === "help" && asked !== undefined && !asked.startsWith("-")) {
    const known = [...program.commands.map((c) => c.name()), "help"];
    if (!known.includes(asked)) {
      io.stderr.write(`oc-exec: help: no command ${JSON.stringify(asked)}; the commands are ${known.join(", ")}\n`);
      return EXIT_CODES.config_error;
    }
  }
  try {
    await program.parseAsync(argv, { from: "user" });
    return status;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (HELP_CODES.has(error.code)) return EXIT_CODES.success;
      // commander has printed its "error: ..." line.
      if (BATCH_COMMANDS.has(argv[0] ?? "")) return batchCouldNotRun(error.message.replace(/^error:\s*/, ""), io);
      return usageFailure({ name: "UsageError", message: error.message.replace(/^error:\s*/, "") }, argv, io, false);
    }
    if (error instanceof ConfigError && misplaced !== null) {
      // A subcommand's stdout is not a turn's stream: the reason on stderr (and, for batch and
      // merge, in their batch.result).
      io.stderr.write(`oc-exec ${misplaced}: ${error.message}\n`);
      return BATCH_COMMANDS.has(misplaced) ? batchCouldNotRun(error.message, io) : EXIT_CODES.config_error;
    }
    if (error instanceof ConfigError) return usageFailure(error, argv, io, true);
    throw error;
  }
}

/** A command line that does not describe a turn: still run.started and result, and exit 5. */
async function usageFailure(
  problem: { name: string; message: string },
  argv: string[],
  io: CliIo,
  explain: boolean,
): Promise<number> {
  // commander has already printed its own "error: ..." line; our own checks have not.
  if (explain) io.stderr.write(`oc-exec: ${problem.message}\n`);
  io.stderr.write("Run oc-exec --help for usage.\n");
  const [{ failedStart }, { deliverTurn }] = await Promise.all([
    import("../engine/failed-start.js"),
    import("./turn-command.js"),
  ]);
  return deliverTurn(
    async (sink) => failedStart(problem, { cwd: process.cwd() }, sink),
    { ...displayFrom({}), quiet: quietRequested(argv) },
    io,
  );
}
