// The commander program: flags, subcommands and help text. Each command's action is handed in by
// main.ts, so commander dispatches (parseAsync) and this file stays a description of the CLI.
import { Command, Option } from "commander";
import { FAIL_ON_CONDITIONS } from "../outcome/fail-on.js";
import { REHEARSALS } from "../scripted/rehearsals.js";
import { DEFAULTS } from "../turn/options.js";
import { STDIN_TIMEOUT_DEFAULT } from "./flags.js";

const collect = (value: string, previous: string[] = []) => [...previous, value];

const HELP_EXAMPLES = `
Examples:
  $ oc-exec "Explain what src/ does" | jq -r 'select(.type=="result") | .text'
  $ git diff | oc-exec -m anthropic/claude-sonnet-4-5 --dir ../repo "Review this diff"
  $ oc-exec resume --last "Now add tests"            # = oc-exec --continue "Now add tests"
  $ oc-exec --allow read,grep,glob,list --output-schema answer.schema.json "Which files use fetch?"
  $ status=0; oc-exec --timeout 10m --max-cost-usd 0.50 "Fix the failing test" > events.jsonl || status=$?
    case $status in
      0) echo ok ;;  2) echo "needs a permission" ;;  4) echo "provider API failed" ;;
      5) echo "fix the configuration" ;;  124) echo "timed out" ;;  *) echo "failed" ;;
    esac

Durations: 1500ms, 90s, 5m, 1h, 1m30s, or a bare number of seconds; 0 turns a limit off.
Exit codes: 0 success, 1 agent_error, 2 approval_denied, 3 context_overflow, 4 api_error,
5 config_error, 6 budget_exceeded, 70 internal_error, 124 timeout, 130 interrupted, 143 terminated.
stdout carries JSONL events only (schema: oc-exec schema); progress goes to stderr.`;

export type ProgramOutput = { writeOut(text: string): void; writeErr(text: string): void };

/** What each command does; main.ts supplies them. Arguments arrive as commander passes them. */
export type Actions = {
  turn(prompt: string[], flags: Record<string, unknown>): Promise<void>;
  schema(): Promise<void>;
  replay(file: string, flags: Record<string, unknown>): Promise<void>;
  doctor(flags: Record<string, unknown>): Promise<void>;
  validate(file: string, flags: Record<string, unknown>): Promise<void>;
};

const noAction = async () => {};
const NO_ACTIONS: Actions = {
  turn: noAction,
  schema: noAction,
  replay: noAction,
  doctor: noAction,
  validate: noAction,
};

export function buildProgram(output: ProgramOutput, actions: Actions = NO_ACTIONS): Command {
  const program = new Command("oc-exec")
    // Set before the subcommands are added, so they inherit both.
    .exitOverride()
    .configureOutput(output)
    .description("Run one OpenCode turn headlessly: JSONL events on stdout, progress on stderr, meaningful exit codes.")
    .argument("[prompt...]", "the prompt (joined with spaces); - waits for the prompt on stdin")
    .helpOption("-h, --help", "show this help")
    // Not commander's .version(): oc-exec also reports opencode's version (cli/versions.ts).
    .option("-V, --version", "print oc-exec's and opencode's versions")
    .showSuggestionAfterError(true)
    // commander adds `help [command]` by itself only to programs without an action of their own.
    .helpCommand(true)
    // Options after a subcommand name belong to the subcommand (doctor -m, replay -q).
    .enablePositionalOptions()
    .allowExcessArguments(false);

  program.optionsGroup("Model and agent:");
  program
    .option("-m, --model <provider/model>", "model to use, e.g. anthropic/claude-sonnet-4-5")
    .option("--agent <name>", "opencode agent to use")
    .option("--variant <name>", "model variant (provider-specific reasoning effort)")
    .option("--thinking", "include reasoning events");
  program.optionsGroup("Workspace, session and prompt:");
  program
    .option("--dir <path>", "workspace directory (default: the current directory)")
    .option("-s, --session <id>", "resume this opencode session")
    .option("-c, --continue", "resume the most recent session")
    .option("--fork", "fork the resumed session (with --session or --continue)")
    .option("--ephemeral", "delete the session after the turn, also when it fails")
    .option("--title <text>", "session title (default: the prompt's first line)")
    .option("-f, --file <path>", "attach a file to the message (repeatable)", collect)
    .option("--prompt-file <path>", "read the prompt (or more of it) from a file")
    .option(
      "--stdin-timeout <duration>",
      `with a prompt argument, how long to wait for piped stdin (default: ${STDIN_TIMEOUT_DEFAULT})`,
    )
    .option("--pure", "run opencode without external plugins")
    .option(
      "--auto",
      "approve every permission the opencode config does not deny (default: ask, which a headless run rejects)",
    )
    .addOption(new Option("--dangerously-skip-permissions", "alias of --auto").hideHelp())
    .option(
      "--allow <keys>",
      "allow these permission keys (comma list, repeatable); every other known key is denied",
      collect,
    )
    .option("--deny <keys>", "deny these permission keys (comma list, repeatable); overrides --allow", collect)
    .option(
      "--config <file.json>",
      "extra opencode configuration, merged into OPENCODE_CONFIG_CONTENT (repeatable)",
      collect,
    )
    .option("--mcp <name=command>", "an MCP server for this turn: NAME=COMMAND [ARGS...] (repeatable)", collect)
    .option("--opencode <path>", "opencode binary (default: $OC_EXEC_OPENCODE, the bundled one, then PATH)")
    .option(
      "--rehearse <scenario>",
      `rehearse a pipeline offline: the real opencode against oc-exec's scripted model in a throwaway HOME, playing ${Object.keys(REHEARSALS).join(", ")} (env OC_EXEC_REHEARSE)`,
    );
  program.optionsGroup("Limits:");
  program
    .option("--timeout <duration>", "stop the whole turn after this long (e.g. 10m, 1m30s; default: off)")
    .option(
      "--startup-timeout <duration>",
      `stop if opencode prints no JSON event within this long (default: ${DEFAULTS.startupTimeoutMs / 1000}s)`,
    )
    .option("--idle-timeout <duration>", "stop after this long with no output from opencode (default: off)")
    .option(
      "--kill-after <duration>",
      `grace period between SIGTERM and SIGKILL (default: ${DEFAULTS.killAfterMs / 1000}s)`,
    )
    .option("--max-steps <n>", "stop the turn when it starts more than n model steps")
    .option("--max-tokens <n>", "stop when input+output+reasoning tokens exceed n")
    .option("--max-cost-usd <x>", "stop when the reported cost exceeds x dollars")
    .option("--max-output-bytes <n>", `cap each tool output in events (default: ${DEFAULTS.maxOutputBytes})`);
  program.optionsGroup("Output:");
  program
    .option("-o, --output-last-message <file>", "write the final assistant message to a file (atomically)")
    .option(
      "--output-schema <file>",
      "a JSON Schema the final answer must satisfy; the value goes to result.structured_output",
    )
    .option(
      "--no-export",
      "do not run `opencode export` after the turn to learn the model and cost (default: export when -m is not given; env OC_EXEC_EXPORT=0 turns it off)",
    )
    .option(
      "--fail-on <conditions>",
      `fail a turn opencode calls successful (exit 1) when: ${Object.keys(FAIL_ON_CONDITIONS).join(", ")} (comma list, repeatable)`,
      collect,
    )
    .option("--include-raw", "attach the original opencode line to each event (raw)")
    .option("-q, --quiet", "no progress on stderr")
    .option("--verbose", "also show opencode's own stderr lines")
    .option("--timestamps", "prefix progress lines with the time")
    .addOption(new Option("--color <when>", "color on stderr (default: auto)").choices(["auto", "always", "never"]));

  program.addHelpText("after", HELP_EXAMPLES);
  program.action(actions.turn);
  // Rewritten to --session/--continue before parsing (main.ts); listed here so --help shows it.
  program
    .command("resume")
    .argument("[session]", "the session id, or --last for the most recent")
    .description("resume a session: resume ID [prompt...] = --session ID, resume --last [prompt...] = --continue");
  program.command("schema").description("print the JSON Schema of the events on stdout").action(actions.schema);
  program
    .command("replay")
    .description(
      "normalize a recorded `opencode run --format json` stream offline: the same events and exit code a live run gives",
    )
    .argument("<file>", "the recorded stdout, - for stdin, or a fixture directory (stdout.txt, stderr.txt, meta.json)")
    .option("--stderr <file>", "opencode's recorded stderr")
    .option("--exit-code <n>", "opencode's exit status (default: from meta.json, else 0)")
    .option("--signal <name>", "the signal that killed opencode, if any")
    .option("--dir <path>", "the recorded workspace: file.changed paths are made relative to it")
    .option("-q, --quiet", "no progress on stderr")
    .action(actions.replay);
  program
    .command("doctor")
    .description("check that opencode, the workspace, models, credentials and permissions are ready; exit 0 or 5")
    .option("--json", "print the report as one JSON object on stdout")
    .option("--dir <path>", "the workspace to check")
    .option("-m, --model <provider/model>", "also check that this model is available")
    .option("--opencode <path>", "the opencode binary to check")
    .option("--probe", "also send one minimal real request to the model (costs a few tokens) and time it")
    .action(actions.doctor);
  program
    .command("validate")
    .description("check an oc-exec JSONL stream against the schema and the contract (seq, one result last, exit code)")
    .argument("<file>", "the JSONL file, or - for stdin")
    .option("--json", "print the report as one JSON object on stdout")
    .action(actions.validate);
  return program;
}

/** The help text exactly as `oc-exec --help` prints it when stdout is not a terminal (80 columns). */
export function renderHelp(): string {
  let text = "";
  const program = buildProgram({ writeOut: (s) => (text += s), writeErr: () => {} });
  program.configureOutput({ writeOut: (s) => (text += s), writeErr: () => {}, getOutHelpWidth: () => 80 });
  try {
    program.parse(["--help"], { from: "user" });
  } catch {
    // exitOverride: commander throws after printing the help
  }
  return text;
}
