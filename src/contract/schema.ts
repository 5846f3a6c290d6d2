// oc-exec event schema v1: the single source of truth. Types come from z.infer and
// schemas/oc-exec-events.schema.json is generated from these definitions (scripts/generate-schema.ts).
// Production code builds these values directly and does not validate them on the hot path; the
// tests validate every line we write, with zod and independently with ajv.
import { z } from "zod";
import { OUTCOME_CLASSES } from "./exit-codes.js";
import { SCHEMA_VERSION } from "./schema-version.js";
import { WARNING_CODES } from "./warning-codes.js";

export { SCHEMA_VERSION };

const count = () => z.number().int().min(0);
const nullableString = (what: string) => z.string().nullable().describe(what);

const OutcomeClassSchema = z
  .enum(OUTCOME_CLASSES)
  .meta({ id: "OutcomeClass", description: "How the turn ended; each class has one exit code." });

export const UsageSchema = z
  .object({
    input: count().describe("Input (prompt) tokens."),
    output: count().describe("Output tokens."),
    reasoning: count().describe("Reasoning tokens."),
    cache_read: count().describe("Tokens read from the provider's prompt cache."),
    cache_write: count().describe("Tokens written to the provider's prompt cache."),
    total: count().describe("Total tokens as the provider counts them."),
  })
  .strict()
  .meta({ id: "Usage", description: "Token usage." });

const TimestampSchema = z.iso
  .datetime({ precision: 3 })
  .meta({ id: "Timestamp", description: "When oc-exec wrote the event, ISO 8601 UTC with milliseconds." });
const SessionIdSchema = z
  .string()
  .nullable()
  .meta({ id: "SessionId", description: "The opencode session id, null until known." });

const base = {
  seq: count().describe("0, 1, 2, ... contiguous within one run."),
  time: TimestampSchema,
  session_id: SessionIdSchema,
  raw: z.string().optional().describe("With --include-raw: the opencode line this event came from."),
  task_id: z
    .string()
    .optional()
    .describe("In a batch stream (oc-exec batch): the task the event belongs to; seq counts within the task."),
  turn: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      "In a conversation (--input-format jsonl): the turn the event belongs to; seq counts within the turn. Conversation-level lines (input errors, conversation.result) have none.",
    ),
  attempt: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      "With --retry or --fallback-model: the attempt of the turn the event belongs to, from 1 (every event of the turn carries it). seq still counts across attempts.",
    ),
};

/** "run.started" -> "RunStarted": each event type is one named definition in the JSON Schema. */
const definitionName = (type: string) => type.replace(/(^|[._])([a-z])/g, (_m, _sep, c: string) => c.toUpperCase());

const event = <T extends string, S extends z.ZodRawShape>(type: T, shape: S, description: string) =>
  z
    .object({ type: z.literal(type), ...base, ...shape })
    .strict()
    .meta({ id: definitionName(type), description });

const ChangeKindSchema = z.enum(["added", "modified", "deleted"]);
export const FileChangeSchema = z
  .object({ path: z.string(), change: ChangeKindSchema })
  .strict()
  .meta({ id: "FileChange" });

export const PermissionDenialSchema = z
  .object({
    permission: nullableString("The permission key, e.g. bash or external_directory."),
    pattern: nullableString("What the permission was asked for, e.g. the command or path."),
    tool: nullableString("The tool whose call was denied."),
    call_id: nullableString("The denied tool call's id."),
    patterns: z
      .array(z.string())
      .optional()
      .describe("On a server (--attach): every pattern the permission was asked for; `pattern` is the first."),
  })
  .strict()
  .meta({ id: "PermissionDenial" });

export const ErrorDetailSchema = z
  .object({
    name: z.string().describe("opencode's error name (APIError, ContextOverflowError, ...) or oc-exec's own."),
    message: z.string().describe("What went wrong, in words a person can act on. Secrets are redacted."),
    status_code: z.number().int().nullable().describe("HTTP status of a provider API error, else null."),
    retryable: z.boolean().nullable().describe("Whether the provider said a retry may succeed, else null."),
    timeout: z
      .object({ kind: z.enum(["turn", "startup", "idle"]), ms: count() })
      .strict()
      .optional()
      .describe("Which timeout fired, for class timeout."),
    budget: z
      .object({ limit: z.enum(["steps", "tokens", "cost_usd"]), max: z.number(), used: z.number() })
      .strict()
      .optional()
      .describe("Which budget was crossed, for class budget_exceeded."),
  })
  .strict()
  .meta({ id: "ErrorDetail", description: "Why the turn failed; null on success." });

const SandboxFields = {
  mode: z.enum(["read-only", "workspace-write"]),
  writable: z
    .array(z.string())
    .describe("Every path the sandbox lets the turn write (its own state and temporary directory included)."),
  allowed_hosts: z
    .array(z.string())
    .describe("HOST or HOST:PORT entries the sandbox's proxy lets through: the providers' hosts and --allow-host."),
  process_limit: z
    .number()
    .int()
    .nullable()
    .optional()
    .describe(
      "How many processes the sandbox's commands may have at once (a pids cgroup; OC_EXEC_SANDBOX_MAX_PROCESSES); null where none could be made here. Absent on a server started by an older release.",
    ),
};

const RunStartedSchema = event(
  "run.started",
  {
    schema_version: z.literal(SCHEMA_VERSION),
    oc_exec_version: z.string(),
    opencode: z
      .object({
        path: z.string().nullable(),
        version: z.string().nullable(),
        url: z
          .string()
          .optional()
          .describe("With --attach: the opencode server's URL (without credentials); path is then null."),
        host: z
          .string()
          .optional()
          .describe(
            "With --ssh, or on a server oc-exec started on another host (server start --ssh, batch --ssh, a task's ssh): the host the turn runs on, as given; path is then the binary there.",
          ),
      })
      .strict()
      .describe("The opencode binary that will run the turn; path null when none was found."),
    cwd: z.string().describe("The absolute workspace directory."),
    model: nullableString("The requested provider/model, or null for opencode's default."),
    agent: nullableString("The requested agent, or null."),
    resume: nullableString("The session id being resumed, or null."),
    sandbox: z
      .object(SandboxFields)
      .strict()
      .optional()
      .describe(
        "The sandbox opencode runs in (--sandbox, or its server's: server start --sandbox); absent when it runs without one.",
      ),
    acp: z
      .object({
        name: z.string().describe("The agent --acp named: a built-in name, or its command's first word."),
        agent_name: nullableString("The name the agent gave itself in ACP's initialize, or null."),
        version: nullableString("The version the agent gave in ACP's initialize, or null when it gave none."),
        protocol_version: z.number().int().describe("The ACP protocol version the agent answered initialize with."),
      })
      .strict()
      .optional()
      .describe(
        "With --acp: the agent that runs the turn, started and initialized before this line; opencode.path is then its command. Absent otherwise.",
      ),
  },
  "Always the first line, written before opencode is spawned.",
);

const SessionStartedSchema = event(
  "session.started",
  { resumed: z.boolean().describe("True when an existing session was resumed.") },
  "The first opencode line carrying a session id arrived.",
);

const StepStartedSchema = event("step.started", { step: count().min(1) }, "A model step began.");

const StepFinishedSchema = event(
  "step.finished",
  {
    step: count().min(1),
    reason: nullableString("Why the step ended: stop, tool-calls, length, ..."),
    usage: UsageSchema,
    cost_usd: z.number().min(0),
    model: nullableString(
      "provider/model that served the step, as opencode's log names it (1.18: yes); null when the release does not say.",
    ),
  },
  "A model step ended, with its own token usage, cost and model.",
);

const MessageSchema = event("message", { text: z.string() }, "A complete assistant text part.");
const MessageDeltaSchema = event(
  "message.delta",
  {
    text: z.string().describe("The text just written; appended to the earlier deltas of the same part."),
    part_id: nullableString("The text part it belongs to; its complete `message` event follows."),
  },
  "With --text-deltas on a server (--attach): assistant text as the model writes it.",
);
const ReasoningSchema = event("reasoning", { text: z.string() }, "A reasoning part (opencode --thinking).");

const ToolSchema = event(
  "tool",
  {
    call_id: nullableString("The tool call id."),
    tool: z.string(),
    status: z.enum(["completed", "error", "denied"]),
    input: z.unknown().describe("The tool's input, as opencode reported it."),
    output: nullableString("The tool's output, capped at --max-output-bytes."),
    output_truncated: z.boolean(),
    error: nullableString("The tool's error text."),
    title: nullableString("opencode's short title for the call."),
    duration_ms: count().nullable(),
  },
  "A tool call finished.",
);

const PermissionDeniedSchema = event(
  "permission.denied",
  PermissionDenialSchema.shape,
  "A tool call was refused because its permission was not granted.",
);

const FileChangedSchema = event("file.changed", FileChangeSchema.shape, "A file-writing tool changed a file.");

const WarningSchema = event(
  "warning",
  {
    code: z
      .string()
      .describe(
        `A stable, machine-readable code: ${Object.keys(WARNING_CODES).join(", ")}. More may be added within a schema version.`,
      ),
    message: z.string(),
  },
  "Something unexpected that did not end the turn.",
);

const ErrorEventSchema = event(
  "error",
  {
    class: OutcomeClassSchema,
    name: z.string(),
    message: z.string(),
    status_code: z.number().int().nullable(),
    retryable: z.boolean().nullable(),
  },
  "opencode reported an error (one event per opencode error line).",
);

/** One --verify command's run: what verify.finished and result.verification say of it. */
const CheckRunFields = {
  command: z.string().describe("The --verify command, as given."),
  exit_code: z.number().int().nullable().describe("Its exit status; null when a signal or its timeout ended it."),
  signal: nullableString("The signal that ended it, if one did."),
  timed_out: z.boolean().describe("--verify-timeout ended it."),
  duration_ms: count(),
  output: z
    .string()
    .describe("The tail of what it printed (stdout and stderr together; the last 40 lines, at most 4 KB), redacted."),
};

const RetrySchema = event(
  "retry",
  {
    failed_attempt: z.number().int().min(1).describe("The attempt that failed."),
    class: OutcomeClassSchema.describe("What that attempt would have ended as."),
    name: z.string().describe("Its cause, as result.error.name would say it."),
    message: z.string(),
    wait_ms: count().describe("How long oc-exec waits before the next attempt."),
    model: nullableString("The model of the next attempt (the fallback, once the model's attempts are spent)."),
    resumed: z
      .boolean()
      .describe("The next attempt goes on in the same session (false: no session existed; it starts again)."),
  },
  "An attempt of the turn failed transiently (--retry): another follows, after wait_ms.",
);

const VerifyStartedSchema = event(
  "verify.started",
  {
    command: z.string().describe("The --verify command, as given."),
    round: z.number().int().min(1).describe("1 after the turn, 2 after the agent's first repair, …"),
  },
  "A --verify command started, in the workspace, after the agent's work (and after each repair).",
);

const VerifyFinishedSchema = event(
  "verify.finished",
  {
    ...CheckRunFields,
    round: z.number().int().min(1),
    passed: z.boolean().describe("Exit status 0."),
  },
  "A --verify command ended. A failed one sends the agent back with its output, --verify-attempts times at most.",
);

export const ResultSchema = event(
  "result",
  {
    ok: z.boolean(),
    exit_code: z.number().int().describe("Equals oc-exec's exit status."),
    task_digest: z
      .string()
      .optional()
      .describe(
        "In a batch stream: a digest of the task's line (its fields, whatever their order); --resume runs a task again when its line changed.",
      ),
    class: OutcomeClassSchema,
    error: ErrorDetailSchema.nullable(),
    model: nullableString("provider/model as requested or as opencode reported it."),
    text: nullableString("The final assistant message."),
    usage: UsageSchema.describe("Summed over all steps."),
    cost_usd: z.number().min(0),
    duration_ms: count(),
    steps: count(),
    tools: z.object({ total: count(), failed: count(), denied: count() }).strict(),
    files_changed: z.array(FileChangeSchema),
    workspace_changes: z
      .object({
        source: z
          .enum(["git", "tools"])
          .describe(
            "git: every file git lists in the workspace (tracked, or untracked and not ignored), compared by content with the start of the turn; tools: what the write/edit tools reported (no git work tree, or one too large to compare).",
          ),
        files: z.array(FileChangeSchema),
      })
      .strict()
      .optional()
      .describe(
        "What changed in the workspace during the turn, by whatever means: the tools' writes and the commands the agent ran. files_changed keeps the tools' own writes. Absent when the turn never started.",
      ),
    output_patch: z
      .object({
        path: z.string().describe("The patch file (absolute)."),
        files: count().describe("How many files the patch changes; 0: the turn changed nothing, the file is empty."),
        bytes: count().describe("The patch's size in bytes."),
      })
      .strict()
      .optional()
      .describe(
        "--output-patch: the patch of the turn's workspace changes that was written (git apply takes it on a clean checkout). Absent when none was asked for, the turn never started, or it could not be written (an output_patch_failed warning says why).",
      ),
    permission_denials: z.array(PermissionDenialSchema),
    sandbox: z
      .object({
        ...SandboxFields,
        refused_connections: count().describe(
          "Connections the sandbox's proxy refused (each named by a sandbox_refused warning).",
        ),
        opencode_config_changed: z
          .array(z.string())
          .optional()
          .describe(
            "opencode's configuration the turn created, changed or removed in the workspace (opencode.json(c), files under .opencode/), relative to it, read from the disk whatever git ignores: the next opencode started there reads it, outside any sandbox too (a sandbox_opencode_config warning names them).",
          ),
        agent_files_changed: z
          .array(z.string())
          .optional()
          .describe(
            "The other files coding agents load on their own that the turn created, changed or removed in the workspace: instruction files (AGENTS.md, CLAUDE.md, GEMINI.md, .github/copilot-instructions.md, …) and other agents' configuration (.claude/, .mcp.json, .gemini/, .codex/, .agents/, …; docs/sandbox.md lists them all), relative to it, sorted, read from the disk whatever git ignores: the next agent started there follows them, outside any sandbox too (a sandbox_agent_files warning names them). opencode's own configuration is in opencode_config_changed, never here. Absent from results of older releases.",
          ),
        hidden_changes: z
          .object({
            count: z.number().int().nonnegative(),
            paths: z.array(z.string()).max(100),
          })
          .strict()
          .optional()
          .describe(
            "Files (and links) the turn created or changed in the workspace that workspace_changes does not show, since git does not list them: under a path a .gitignore names (node_modules, .venv, build output) or one the turn named in a .gitignore it wrote. count: how many; paths: the first 100, relative to the workspace, sorted. Found by the change time every write sets, on the walk after the turn; a directory the turn put in place (not the one at its path before the turn) holding files older than the turn (moved there: a move keeps its files' times) is one path ending in /. The job's later steps run what is there outside any sandbox (npm test runs node_modules/.bin, python a .venv's site-packages); a sandbox_hidden_changes warning names them. Files named in opencode_config_changed or agent_files_changed are not repeated here. Absent from results of older releases.",
          ),
      })
      .strict()
      .optional()
      .describe(
        "The sandbox the turn ran in (--sandbox, or its server's: server start --sandbox); absent when it ran without one.",
      ),
    opencode: z
      .object({
        exit_code: z.number().int().nullable(),
        signal: z.string().nullable(),
      })
      .strict()
      .describe("How the opencode process ended; nulls when it never ran."),
    structured_output: z
      .unknown()
      .optional()
      .describe("With --output-schema: the validated JSON value of the final answer."),
    attempts: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("With --retry or --fallback-model: how many attempts the turn took; the last decided the class."),
    failed_attempts: z
      .array(
        z
          .object({
            attempt: z.number().int().min(1),
            class: OutcomeClassSchema,
            name: z.string(),
            message: z.string(),
            model: nullableString("The model that attempt used."),
          })
          .strict(),
      )
      .optional()
      .describe("With --retry or --fallback-model: the attempts that failed transiently, in order."),
    verification: z
      .object({
        passed: z.boolean().describe("Every command passed in the last round."),
        rounds: z.number().int().min(1).describe("How many times the commands ran: 1 + the agent's repairs."),
        checks: z
          .array(z.object(CheckRunFields).strict())
          .describe("The last round's commands, in order; a round stops at its first failure."),
      })
      .strict()
      .optional()
      .describe("With --verify, when the checks ran (the turn otherwise succeeded)."),
    session_deleted: z
      .boolean()
      .optional()
      .describe("With --ephemeral: whether the session was deleted after the turn."),
    stream: z
      .object({
        json_lines: count(),
        other_lines: count(),
        blank_lines: count(),
        warnings: count(),
      })
      .strict()
      .describe("What oc-exec read from opencode's stdout, so a consumer can check nothing went missing."),
  },
  "Exactly one, always the last line.",
);

const TaskOutcomeSchema = z
  .object({
    id: z.string(),
    class: OutcomeClassSchema,
    exit_code: z.number().int(),
    cost_usd: z.number().min(0),
    duration_ms: count(),
    digest: z.string().optional().describe("The task's task_digest: what --resume compares."),
    run: z
      .enum(["ran", "not_run", "skipped"])
      .describe(
        "ran; not_run (the batch stopped before it started: its result says why); skipped (it succeeded in the --resume stream)",
      ),
    error: z
      .object({ name: z.string(), message: z.string() })
      .strict()
      .nullable()
      .optional()
      .describe(
        "Why the task did not succeed: its result's error name and message (redacted); null when it succeeded.",
      ),
    attempts: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("With retry or fallback_model: how many attempts the task took (its result's attempts)."),
  })
  .strict()
  .meta({ id: "TaskOutcome" });

const BatchResultSchema = event(
  "batch.result",
  {
    schema_version: z.literal(SCHEMA_VERSION),
    ok: z.boolean().describe("True when every task succeeded (or had succeeded before, with --resume)."),
    exit_code: z
      .number()
      .int()
      .describe(
        "Equals oc-exec batch's exit status: 0 all succeeded, 1 some task did not, 6 the batch budget stopped it, 130/143 a signal, 5 the batch could not run or (merge) is not complete.",
      ),
    counts: z.record(z.string(), count()).describe("Tasks per class, over the tasks that ran or were not run."),
    retries: count()
      .optional()
      .describe("With retry or fallback_model on some task: the attempts after a transient failure, over all tasks."),
    tasks: z.array(TaskOutcomeSchema).describe("Every task of the (shard of the) tasks file, in file order."),
    usage: UsageSchema.describe("Summed over the tasks that ran."),
    cost_usd: z.number().min(0),
    duration_ms: count(),
    shard: z
      .object({ index: z.number().int().min(1), count: z.number().int().min(1) })
      .strict()
      .nullable()
      .describe("With --shard i/n: which shard this stream is; null for a whole batch or a merge."),
    problems: z
      .array(z.string())
      .describe(
        "Why the batch is not complete (exit 5): for merge, tasks or shards missing or duplicated and files unreadable or cut off; for a batch that could not run (no tasks), the tasks file's bad lines, the bad flag or the server that would not start. Empty otherwise.",
      ),
  },
  "The last line of a batch stream (oc-exec batch, batch merge): the summary, with seq 0 and session_id null. Each task's own events, marked with task_id, end with that task's result.",
);

const ConversationResultSchema = event(
  "conversation.result",
  {
    schema_version: z.literal(SCHEMA_VERSION),
    ok: z.boolean().describe("True when every turn succeeded and every input line was a valid turn."),
    exit_code: z
      .number()
      .int()
      .describe(
        "Equals oc-exec's exit status: 0 all turns succeeded, 1 a turn did not or an input line was invalid, 6/124 a whole-conversation budget or timeout, 130/143 a signal.",
      ),
    turns: z
      .array(
        z
          .object({
            turn: z.number().int().min(1),
            class: OutcomeClassSchema,
            exit_code: z.number().int(),
            cost_usd: z.number().min(0),
            duration_ms: count(),
          })
          .strict(),
      )
      .describe("Every turn, in order."),
    input_errors: count().describe("Input lines that were not a valid turn (each has its error event)."),
    usage: UsageSchema.describe("Summed over the turns."),
    cost_usd: z.number().min(0),
    duration_ms: count(),
  },
  "The last line of a conversation (--input-format jsonl): the conversation's own result. Each turn's events, marked with turn, end with that turn's result.",
);

export const EventSchema = z.discriminatedUnion("type", [
  RunStartedSchema,
  SessionStartedSchema,
  StepStartedSchema,
  StepFinishedSchema,
  MessageSchema,
  MessageDeltaSchema,
  ReasoningSchema,
  ToolSchema,
  PermissionDeniedSchema,
  FileChangedSchema,
  WarningSchema,
  ErrorEventSchema,
  RetrySchema,
  VerifyStartedSchema,
  VerifyFinishedSchema,
  ResultSchema,
  BatchResultSchema,
  ConversationResultSchema,
]);

export type Usage = z.infer<typeof UsageSchema>;
export type FileChange = z.infer<typeof FileChangeSchema>;
export type PermissionDenial = z.infer<typeof PermissionDenialSchema>;
export type ErrorDetail = z.infer<typeof ErrorDetailSchema>;
export type OcEvent = z.infer<typeof EventSchema>;
export type EventType = OcEvent["type"];
export type EventOf<T extends EventType> = Extract<OcEvent, { type: T }>;
export type ResultEvent = EventOf<"result">;

type Stamp = "seq" | "time" | "session_id";
/** An event before the emitter stamps seq, time and session_id on it. */
export type EventDraft = OcEvent extends infer E ? (E extends OcEvent ? Omit<E, Stamp> : never) : never;
export type BatchResult = z.infer<typeof BatchResultSchema>;
export type TaskOutcome = z.infer<typeof TaskOutcomeSchema>;
export type ConversationResult = z.infer<typeof ConversationResultSchema>;
