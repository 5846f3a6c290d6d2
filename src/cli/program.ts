// The commander program: flags, subcommands and help text. Each command's action is handed in by
// main.ts, so commander dispatches (parseAsync) and this file stays a description of the CLI.
import { Command, Option } from "commander";
import { FAIL_ON_CONDITIONS } from "../domain/outcome/fail-on.js";
import { REHEARSALS } from "../domain/scripted/rehearsals.js";
import { ACP_AGENTS } from "../plan/acp-spec.js";
import { DEFAULTS } from "../plan/options.js";
import { SERVER_IDLE_DEFAULT, STDIN_TIMEOUT_DEFAULT } from "./flags.js";

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
Budgets (--max-steps, --max-tokens, --max-cost-usd): leave one out for no limit; 0 is a usage error.
Permissions: with no --allow/--deny, opencode's own defaults apply, and they let the agent run
shell commands and write files without asking; only what they leave at "ask" is rejected. For
untrusted input allow only what the task needs: --allow read,grep,glob,list denies the rest.
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
  server(
    command: "start" | "list" | "stop" | "supervise" | "broker",
    args: string[],
    flags: Record<string, unknown>,
  ): Promise<void>;
  validate(file: string, flags: Record<string, unknown>): Promise<void>;
  scriptedModel(): Promise<void>;
  batch(file: string, flags: Record<string, unknown>): Promise<void>;
  merge(files: string[], flags: Record<string, unknown>): Promise<void>;
};

const noAction = async () => {};
const NO_ACTIONS: Actions = {
  turn: noAction,
  schema: noAction,
  replay: noAction,
  doctor: noAction,
  validate: noAction,
  server: noAction,
  batch: noAction,
  merge: noAction,
  scriptedModel: noAction,
};

/** One wording for --junit on a turn, a batch and a merge. */
const JUNIT_HELP =
  "also write a JUnit XML report there: a test case per turn (or task), failed for any class but success (GitLab, Jenkins, GitHub test reports)";

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
      `with a prompt argument, how long to wait for piped stdin (default: ${STDIN_TIMEOUT_DEFAULT}; 0: do not wait)`,
    )
    .option(
      "-n, --no-stdin",
      "never read stdin into the prompt (in a loop that reads stdin: while read f; do oc-exec -n ...; done < list)",
    )
    .option("--pure", "run opencode without external plugins")
    .option(
      "--auto",
      "approve every permission the opencode config does not deny (default: opencode's own permissions, whose ask a headless run rejects)",
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
    .option(
      "--redact-env <name>",
      "this variable's value is a secret too: [REDACTED] in everything oc-exec writes (repeatable; names with TOKEN, SECRET, PASSWORD, CREDENTIAL always are, KEY when the value looks like a key; OC_EXEC_REDACT_EXEMPT=NAME,... exempts)",
      collect,
    )
    .option("--mcp <name=command>", "an MCP server for this turn: NAME=COMMAND [ARGS...] (repeatable)", collect)
    .option("--opencode <path>", "opencode binary (default: $OC_EXEC_OPENCODE, the bundled one, then PATH)")
    .option(
      "--rehearse <scenario>",
      `rehearse a pipeline offline: the real opencode against oc-exec's scripted model in a throwaway HOME, playing ${Object.keys(REHEARSALS).join(", ")} (env OC_EXEC_REHEARSE)`,
    );
  program.optionsGroup("Sandbox (for untrusted input; Linux: bubblewrap, socat, ripgrep):");
  sandboxOptions(program).option("--full-auto", "the safe way to run unattended: --sandbox workspace-write --auto");
  program.optionsGroup("Warm server:");
  program
    .option(
      "--attach <url>",
      "run the turn on a running opencode server (oc-exec server start, or opencode serve); password: OPENCODE_SERVER_PASSWORD",
    )
    .option(
      "--warm",
      "run on a warm server that fits the turn, starting one that later turns reuse; it stops after $OC_EXEC_WARM_IDLE (default 5m) without a turn (env OC_EXEC_WARM=1)",
    )
    .option("--text-deltas", "with --attach or --warm: message.delta events carry the text as the model writes it");
  program.optionsGroup("Another host (the system's OpenSSH client):");
  program
    .option(
      "--ssh <dest>",
      "run the turn on this host: [user@]host[:port] or an ssh config alias; --dir and --opencode then name a directory and a binary there",
    )
    .option("--ssh-option <key=value>", "with --ssh: pass -o KEY=VALUE to ssh (repeatable)", collect);
  program.optionsGroup("Another agent (the Agent Client Protocol):");
  program.option(
    "--acp <agent>",
    `run the turn through an ACP agent: ${Object.keys(ACP_AGENTS).join(", ")}, or its command line, e.g. 'gemini --acp' (env OC_EXEC_ACP)`,
  );
  program.optionsGroup("Conversation (--input-format jsonl):");
  program
    .addOption(
      new Option(
        "--input-format <format>",
        'jsonl: stdin is a conversation, one turn per line ({"prompt": ...}), each sent when the previous ends, in one session; the limits below then cover the whole conversation',
      ).choices(["text", "jsonl"]),
    )
    .option("--turn-max-steps <n>", "with --input-format jsonl: each turn's step budget")
    .option("--turn-max-tokens <n>", "with --input-format jsonl: each turn's token budget")
    .option("--turn-max-cost-usd <x>", "with --input-format jsonl: each turn's cost budget")
    .option("--turn-timeout <duration>", "with --input-format jsonl: each turn's timeout");
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
      "--output-patch <file>",
      "after the turn, write the workspace's changes as a git patch (git apply on a clean checkout; never .git/)",
    )
    .option(
      "--output-schema <file>",
      "a JSON Schema the final answer must satisfy; the value goes to result.structured_output",
    )
    .option(
      "--no-export",
      "do not run `opencode export` after the turn to learn the model and cost (it runs only when opencode's log names no model and -m is not given; env OC_EXEC_EXPORT=0 turns it off)",
    )
    .option(
      "--fail-on <conditions>",
      `fail a turn opencode calls successful (exit 1) when: ${Object.keys(FAIL_ON_CONDITIONS).join(", ")} (comma list, repeatable)`,
      collect,
    );
  retryOptions(verifyOptions(program))
    .option("--junit <file>", JUNIT_HELP)
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
    .description("resume a session: resume ID [prompt...] = --session ID, resume --last [prompt...] = --continue")
    .addHelpText(
      "after",
      "\nIt takes every option of a turn (oc-exec --help lists them), before or after the session.",
    );
  program.command("schema").description("print the JSON Schema of the events on stdout").action(actions.schema);
  program
    .command("replay")
    .description(
      "normalize a recorded `opencode run --format json` stream, or a server's events (OC_EXEC_RECORD_EVENTS), offline: the same events and exit code a live run gives",
    )
    .argument("<file>", "the recorded stdout, - for stdin, or a fixture directory (stdout.txt, stderr.txt, meta.json)")
    .option("--stderr <file>", "opencode's recorded stderr")
    .option("--exit-code <n>", "opencode's exit status (default: from meta.json, else 0)")
    .option("--signal <name>", "the signal that killed opencode, if any")
    .option("--dir <path>", "the recorded workspace: file.changed paths are made relative to it")
    .option("--text-deltas", "a server recording (events.jsonl): also replay message.delta events")
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
  const batch = program
    .command("batch")
    .description(
      "run every task of a JSONL file (one {id, prompt, ...} per line) as its own session on one warm server: one event stream, every event marked with task_id, one batch.result last",
    )
    .argument("<tasks>", "the tasks file")
    .option("--concurrency <n>", "tasks at once (default: twice the CPU cores, 2 to 8)")
    .option("--attach <url>", "run on this server instead of starting one for the batch")
    .option("--acp <agent>", "run tasks that name no agent through this ACP agent, one started per task (as --acp)")
    .option("--dir <path>", "the workspace of tasks that name none (default: the current directory)")
    .option("-m, --model <provider/model>", "the model of tasks that name none")
    .option("--agent <name>", "the agent of tasks that name none")
    .option("--allow <keys>", "the permission allow-list of tasks that give none (repeatable)", collect)
    .option("--deny <keys>", "permission keys denied to tasks that give none (repeatable)", collect)
    .option("--auto", "approve what the rules leave to ask, for tasks that do not say")
    .option("--max-cost-usd <x>", "stop the whole batch when its cost exceeds x dollars")
    .option("--max-tokens <n>", "stop the whole batch when its tokens exceed n")
    .option("--task-max-cost-usd <x>", "each task's cost budget (a task's max_cost_usd wins)")
    .option("--task-max-tokens <n>", "each task's token budget (a task's max_tokens wins)")
    .option("--task-max-steps <n>", "each task's step budget (a task's max_steps wins)")
    .option("--task-timeout <duration>", "each task's timeout (a task's timeout wins)")
    .option("--resume <file>", "an earlier batch's output: tasks that succeeded there are skipped")
    .option("--shard <i/n>", "run only shard i of n (stable: by a hash of each task id)")
    .option("--opencode <path>", "opencode binary for the batch's server")
    .option("--ssh <dest>", "run the batch's server on this host (as server start --ssh): every task in --dir there")
    .option("--ssh-option <key=value>", "with --ssh: pass -o KEY=VALUE to ssh (repeatable)", collect);
  retryOptions(verifyOptions(sandboxOptions(batch, "the batch's server and every task's tools")))
    .option("--junit <file>", JUNIT_HELP)
    .option("-q, --quiet", "no progress on stderr")
    .action((file: string, flags: Record<string, unknown>) => actions.batch(file, flags));
  program
    .command("merge")
    .description(
      "merge the streams of a sharded batch into one, with one batch.result; every task must appear exactly once",
    )
    .argument("<files...>", "the shards' outputs")
    .option("--tasks <file>", "the tasks file: also check that every task in it appears")
    .option("--junit <file>", JUNIT_HELP)
    .action((files: string[], flags: Record<string, unknown>) => actions.merge(files, flags));
  const server = program
    .command("server")
    .description("warm opencode servers for --attach: start one in the background, list them, stop them");
  const start = server
    .command("start")
    .description("start an opencode server in the background and print its URL on stdout: url=$(oc-exec server start)")
    .option("--dir <path>", "the server's workspace (default: the current directory; turns may use others)")
    .option(
      "--idle-timeout <duration>",
      `stop the server after this long without a turn (default: ${SERVER_IDLE_DEFAULT}; 0 = never)`,
    )
    .option("--port <n>", "listen on this port of 127.0.0.1 (default: a free one)")
    .option("--opencode <path>", "opencode binary (default: $OC_EXEC_OPENCODE, the bundled one, then PATH)")
    .option("-m, --model <provider/model>", "with --sandbox: the model whose provider the sandbox lets through")
    .option(
      "--ssh <dest>",
      "start it on this host ([user@]host[:port] or an ssh config alias), behind a local port forward; --dir and --opencode are then there",
    )
    .option("--ssh-option <key=value>", "with --ssh: pass -o KEY=VALUE to ssh (repeatable)", collect);
  sandboxOptions(start, "the server and every tool it starts").action((flags: Record<string, unknown>) =>
    actions.server("start", [], flags),
  );
  server
    .command("list")
    .description("print the servers oc-exec started and still runs, one JSON object per line")
    .action((flags: Record<string, unknown>) => actions.server("list", [], flags));
  server
    .command("stop")
    .description("stop the servers with these URLs (or every one with --all), and their tool processes")
    .argument("[url...]", "the URLs server start printed")
    .option("--all", "stop every server oc-exec started")
    .action((urls: string[], flags: Record<string, unknown>) => actions.server("stop", urls, flags));
  server
    .command("supervise", { hidden: true })
    .argument("<id>")
    .action((id: string, flags: Record<string, unknown>) => actions.server("supervise", [id], flags));
  server
    .command("broker", { hidden: true })
    .argument("<id>")
    .action((id: string, flags: Record<string, unknown>) => actions.server("broker", [id], flags));
  program
    .command("scripted-model")
    .description(
      'serve oc-exec\'s scripted OpenAI-compatible model on loopback for your own pipeline tests: prints {"url", "model", "opencode_config"} and serves until Ctrl-C or SIGTERM',
    )
    .action(() => actions.scriptedModel());
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

/** The sandbox's options, one wording for a turn, a server and a batch (what runs inside differs). */
function sandboxOptions(command: Command, what = "opencode and every tool it starts"): Command {
  return command
    .option(
      "--sandbox <mode>",
      `run ${what} in a sandbox: read-only, workspace-write, or off (default: $OC_EXEC_SANDBOX, else off): no secret stores, network only to the model's provider`,
    )
    .option("--writable <path>", "with --sandbox workspace-write: another path it may write (repeatable)", collect)
    .option(
      "--readable <path>",
      "with --sandbox: another path it may read; HOME is hidden but for opencode's config and toolchains (repeatable)",
      collect,
    )
    .option(
      "--allow-host <host[:port]>",
      "with --sandbox: another host it may reach, e.g. registry.npmjs.org (repeatable)",
      collect,
    )
    .option(
      "--pass-env <name>",
      "with --sandbox or --ssh: pass this environment variable (or NAME_* pattern) to opencode and its tools (repeatable)",
      collect,
    );
}

/** The checks after a turn, one wording for a turn and a batch's tasks. */
function verifyOptions(command: Command): Command {
  return command
    .option(
      "--verify <command>",
      "after a turn that succeeded, run this shell command in the workspace; if it fails, the agent gets its output and tries again (repeatable, in order)",
      collect,
    )
    .option("--verify-timeout <duration>", "each --verify command's limit (default: 10m; 0 = none)")
    .option(
      "--verify-attempts <n>",
      "how many times a failed check sends the agent back (default: 2; 0 = check only); still failing: exit 1",
    );
}

/** Attempts after transient failures, one wording for a turn and a batch's tasks. */
function retryOptions(command: Command): Command {
  return command
    .option(
      "--retry <n>",
      "after a transient failure (a retryable API error, a stall, a lost server), try again up to n times, in the same session (default: 0)",
    )
    .option("--retry-delay <duration>", "the first wait between attempts, doubled each time, with jitter (default: 2s)")
    .option("--retry-max-delay <duration>", "the longest wait between attempts (default: 60s)")
    .option(
      "--fallback-model <provider/model>",
      "once the attempts on the model are spent on transient failures, as many more (at least one) on this one",
    );
}
