// The tasks file of `oc-exec batch`: JSON Lines, one task per line. Checked whole before anything
// runs: a malformed line or a duplicate id is reported with its line number, and nothing starts.
// Pure: text in, tasks or problems out.
import { createHash } from "node:crypto";
import { z } from "zod";
import { parseDuration } from "../../kernel/duration.js";

const TaskSchema = z
  .object({
    id: z.string().min(1).describe("Unique within the file: it marks the task's events and its line in the summary."),
    prompt: z.string().min(1),
    dir: z
      .string()
      .optional()
      .describe(
        "The workspace; relative to the batch's --dir (default: --dir itself). With ssh: a path on that host, relative to the login directory.",
      ),
    ssh: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Run the task on another host ([user@]host[:port] or an ssh config alias): one server there per host and dir.",
      ),
    acp: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Run the task through an ACP agent (--acp): a built-in name (opencode, gemini, qwen, claude, codex, copilot) or its command line; an agent of its own, started for the task.",
      ),
    model: z.string().optional(),
    agent: z.string().optional(),
    variant: z.string().optional(),
    allow: z.array(z.string()).optional(),
    deny: z.array(z.string()).optional(),
    auto: z.boolean().optional(),
    files: z.array(z.string()).optional(),
    max_steps: z.number().int().min(0).optional(),
    max_tokens: z.number().int().min(0).optional(),
    max_cost_usd: z.number().min(0).optional(),
    timeout: z.string().optional().describe("A duration: 90s, 5m, 1m30s."),
    sandbox: z
      .enum(["off", "read-only", "workspace-write"])
      .optional()
      .describe("The task's sandbox: it runs on a server started with it (one per distinct sandbox)."),
    writable: z.array(z.string()).optional().describe("With sandbox workspace-write: more writable paths."),
    readable: z
      .array(z.string())
      .optional()
      .describe("With a sandbox: more readable paths (HOME is hidden but for a short list)."),
    allow_hosts: z.array(z.string()).optional().describe("With a sandbox: more hosts it may reach."),
    retry: z.number().int().min(0).optional().describe("More attempts after a transient failure (--retry)."),
    fallback_model: z.string().optional().describe("provider/model once the attempts are spent (--fallback-model)."),
    verify: z
      .array(z.string())
      .optional()
      .describe("Commands that check the task's work in its dir (--verify); [] turns the batch's off."),
  })
  .strict();

export type Task = z.infer<typeof TaskSchema> & { timeoutMs?: number; line: number; digest: string };

/** JSON with every object's keys sorted: the same task written in another order is the same task. */
const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(",")}]`
    : value !== null && typeof value === "object"
      ? `{${Object.keys(value)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
          .join(",")}}`
      : JSON.stringify(value);

/**
 * What --resume compares: a task that succeeded before is skipped only if its line still says the
 * same thing. 16 hex digits of SHA-256 are plenty to tell the versions of one task id apart.
 */
export function taskDigest(fields: z.infer<typeof TaskSchema>): string {
  return createHash("sha256").update(canonical(fields)).digest("hex").slice(0, 16);
}

export type TaskProblem = { line: number; message: string };

export function parseTasks(text: string): { tasks: Task[]; problems: TaskProblem[] } {
  const tasks: Task[] = [];
  const problems: TaskProblem[] = [];
  const seen = new Map<string, number>();
  text.split("\n").forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      problems.push({ line, message: `not JSON (${(error as Error).message})` });
      return;
    }
    const parsed = TaskSchema.safeParse(value);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "the line"}: ${i.message}`).join("; ");
      problems.push({ line, message: issues });
      return;
    }
    const task: Task = { ...parsed.data, line, digest: taskDigest(parsed.data) };
    if (task.timeout !== undefined) {
      const ms = parseDuration(task.timeout);
      if (ms === null) {
        problems.push({ line, message: `timeout: ${JSON.stringify(task.timeout)} is not a duration like 90s or 5m` });
        return;
      }
      task.timeoutMs = ms;
    }
    const first = seen.get(task.id);
    if (first !== undefined) {
      problems.push({ line, message: `duplicate id ${JSON.stringify(task.id)} (first on line ${first})` });
      return;
    }
    seen.set(task.id, line);
    tasks.push(task);
  });
  if (tasks.length === 0 && problems.length === 0) problems.push({ line: 1, message: "the tasks file has no tasks" });
  return { tasks, problems };
}

/**
 * The shard a task belongs to: FNV-1a of its id, modulo the shard count. It depends on the id
 * alone, so it is the same on every machine and every re-run, whatever the file's order.
 */
export function shardOf(id: string, count: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(id, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return (hash % count) + 1;
}

/** `--shard i/n`, 1-based. */
export function parseShard(text: string): { index: number; count: number } | null {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) return null;
  const index = Number(m[1]);
  const count = Number(m[2]);
  return count >= 1 && index >= 1 && index <= count ? { index, count } : null;
}
