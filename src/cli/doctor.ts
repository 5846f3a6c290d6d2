// `oc-exec doctor`: is this machine ready to run a turn? The binary, the workspace, the models
// opencode sees, credentials (names only, never values), and that a permission policy is accepted.
// Exit 0 when ready, 5 when not. The report goes to stderr; --json prints it on stdout.
import { accessSync, constants, statSync } from "node:fs";
import { resolve } from "node:path";
import { EXIT_CODES } from "../contract/exit-codes.js";
import type { ResultEvent } from "../contract/schema.js";
import { stripAnsi } from "../domain/events/stderr-lines.js";
import { readOpencodeConfigs } from "../domain/opencode/config-sources.js";
import { ensureOpencode } from "../domain/opencode/ensure.js";
import { TESTED_RANGE } from "../domain/opencode/features.js";
import { buildEnv } from "../domain/opencode/invocation.js";
import { invalidInheritedPolicy } from "../domain/opencode/permissions.js";
import { lastLine, runSideCommand } from "../domain/opencode/side-command.js";
import { opencodeStateProblem } from "../domain/opencode/state-dirs.js";
import { writeStdoutText } from "../domain/output/stdout-writer.js";
import { traceSettings } from "../domain/telemetry/trace-settings.js";
import { formatDuration } from "../kernel/duration.js";
import { VERSION } from "../kernel/version.js";

export type Check = { name: string; ok: boolean; detail: string };

/** Environment variables providers read their keys from (names only are ever reported). */
const CREDENTIAL_VARS = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_GENERATIVE_AI_API_KEY",
  "OPENROUTER_API_KEY",
  "GROQ_API_KEY",
  "MISTRAL_API_KEY",
  "XAI_API_KEY",
  "DEEPSEEK_API_KEY",
  "AWS_ACCESS_KEY_ID",
  "AZURE_API_KEY",
  "GITHUB_TOKEN",
];

const DOCTOR_COMMAND_TIMEOUT_MS = 60_000;
const run = (file: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) =>
  runSideCommand(file, args, { env, cwd, timeoutMs: DOCTOR_COMMAND_TIMEOUT_MS, ownTmp: true });

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** "9 models from 2 providers (opencode, fake)", for the provider/model lines `opencode models` prints. */
export function describeModels(list: string[]): string {
  if (list.length === 0) return "opencode lists no models";
  const providers = [...new Set(list.map((m) => m.split("/")[0]!))];
  const named = `${providers.slice(0, 8).join(", ")}${providers.length > 8 ? ", …" : ""}`;
  return `${plural(list.length, "model")} from ${plural(providers.length, "provider")} (${named})`;
}

/** The minimal real request --probe makes: one short answer, no tools, bounded in time. */
const PROBE_PROMPT = "Reply with the single word OK.";
const PROBE_TIMEOUT_MS = 120_000;

/**
 * --probe: one real turn through opencode to the chosen model (a few tokens), so "ready" also means
 * the provider answers. It reports how long the answer took, or what failed, with its class.
 */
async function probe(
  model: string | undefined,
  dir: string,
  opencode: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<Check> {
  const { runTurn } = await import("../app/run-turn.js");
  const started = Date.now();
  let result: ResultEvent | null = null;
  let retries = 0;
  for await (const event of runTurn({
    prompt: PROBE_PROMPT,
    model,
    dir,
    opencode,
    env,
    title: "oc-exec doctor --probe",
    ephemeral: true,
    export: false,
    deny: ["bash", "edit", "webfetch", "websearch", "task"],
    maxSteps: 1,
    timeoutMs: PROBE_TIMEOUT_MS,
  })) {
    if (event.type === "warning" && event.code === "api_retry") retries++;
    if (event.type === "result") result = event;
  }
  const took = formatDuration(Date.now() - started);
  const which = result?.model ?? model ?? "the default model";
  if (result?.ok)
    return { name: "probe", ok: true, detail: `${which} answered in ${took} (${result.usage.total} tokens)` };
  const why = result?.error ? `${result.class} (exit ${result.exit_code}): ${result.error.message}` : "no result";
  const retried = retries > 0 ? `, after ${retries} retr${retries === 1 ? "y" : "ies"}` : "";
  return { name: "probe", ok: false, detail: `${which} failed after ${took}${retried}: ${why}` };
}

async function doctor(opts: {
  dir?: string;
  model?: string;
  opencode?: string;
  probe?: boolean;
  env: NodeJS.ProcessEnv;
}): Promise<{ ready: boolean; checks: Check[] }> {
  const checks: Check[] = [];
  const found = await ensureOpencode(opts.opencode, opts.env);
  const located = "problem" in found ? null : found.binary;
  const detected = "problem" in found ? null : found.detected;
  const notFound = "problem" in found ? found.problem.message : "";
  checks.push(
    located
      ? {
          name: "opencode",
          ok: true,
          detail: `${detected?.version ?? "unknown version"} at ${located.path} (${detected?.tested ? "tested" : `untested; oc-exec is tested with ${TESTED_RANGE}`})`,
        }
      : { name: "opencode", ok: false, detail: notFound },
  );
  const workspace = resolve(opts.dir ?? process.cwd());
  let wsOk = false;
  try {
    wsOk = statSync(workspace).isDirectory();
    accessSync(workspace, constants.W_OK);
  } catch {
    wsOk = false;
  }
  checks.push({
    name: "workspace",
    ok: wsOk,
    detail: wsOk ? `${workspace} (writable directory)` : `${workspace} is not a writable directory`,
  });

  const credentials = CREDENTIAL_VARS.filter((v) => (opts.env[v] ?? "") !== "");
  const custom = configuredProviders(opts.env, workspace);
  const inherited = invalidInheritedPolicy(opts.env.OPENCODE_PERMISSION);
  checks.push({
    name: "inherited permissions",
    ok: inherited === null,
    detail:
      inherited ??
      (opts.env.OPENCODE_PERMISSION ? "OPENCODE_PERMISSION is a valid policy" : "OPENCODE_PERMISSION is not set"),
  });
  const unwritable = opencodeStateProblem(opts.env);
  checks.push({
    name: "opencode's data",
    ok: unwritable === null,
    detail: unwritable ?? "opencode can write its data, state and cache",
  });
  if (located && unwritable === null) {
    // A trivial policy, so the same call also shows that opencode accepts OPENCODE_PERMISSION.
    const env = buildEnv(opts.env, { permission: { bash: "deny" } });
    const models = await run(located.path, ["models"], env, wsOk ? workspace : process.cwd());
    const list = models.stdout
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => /^[\w.-]+\/\S+$/.test(l));
    checks.push({
      name: "permission policy",
      ok: models.ok,
      detail: models.ok
        ? 'opencode accepted OPENCODE_PERMISSION={"bash":"deny"}'
        : `opencode failed with a permission policy: ${lastLine(models.stderr)}`,
    });
    checks.push({ name: "models", ok: list.length > 0, detail: describeModels(list) });
    if (opts.model) {
      const found = list.includes(opts.model);
      checks.push({
        name: "requested model",
        ok: found,
        detail: found
          ? `${opts.model} is available`
          : `${opts.model} is not among the models opencode offers (a provider's models appear only when its credentials are set)`,
      });
    }
    const auth = await run(located.path, ["auth", "list"], env, process.cwd());
    const stored = /(\d+)\s+credentials?/.exec(stripAnsi(auth.stdout));
    const storedCount = stored ? Number(stored[1]) : 0;
    const sources = [
      ...credentials.map((v) => `$${v}`),
      ...(storedCount > 0 ? [`${storedCount} stored by \`opencode auth login\``] : []),
      ...custom.map((p) => `provider ${p.name} in ${p.source}${p.hasKey ? " (with an apiKey)" : ""}`),
    ];
    checks.push({
      name: "credentials",
      ok: sources.length > 0 || list.some((m) => m.startsWith("opencode/")),
      detail: sources.length > 0 ? sources.join("; ") : "none found (only opencode's free models will work)",
    });
  }
  checks.push(await sandboxCheck(opts.env));
  checks.push(tracesCheck(opts.env));
  if (opts.probe && located && wsOk) checks.push(await probe(opts.model, workspace, opts.opencode, opts.env));
  return { ready: checks.every((c) => c.ok), checks };
}

export async function doctorCommand(
  flags: { json?: boolean; dir?: string; model?: string; opencode?: string; probe?: boolean },
  io: { stderr: NodeJS.WriteStream; env: NodeJS.ProcessEnv },
): Promise<number> {
  const report = await doctor({ ...flags, env: io.env });
  if (flags.json) writeStdoutText(`${JSON.stringify({ oc_exec_version: VERSION, ...report })}\n`);
  for (const c of report.checks) io.stderr.write(`${c.ok ? "✓" : "✗"} ${c.name}: ${c.detail}\n`);
  io.stderr.write(
    report.ready
      ? flags.probe
        ? "ready: the model answered a real request\n"
        : "ready, as far as oc-exec can tell without calling the model: the binary, the workspace, the permission policy, the models opencode lists and where credentials come from. Whether the provider answers (a wrong key, no network, a gateway that is down) only --probe shows.\n"
      : "not ready (exit 5)\n",
  );
  return report.ready ? EXIT_CODES.success : EXIT_CODES.config_error;
}

/** Whether the OTEL_* variables ask for a trace, and whether oc-exec can send the one they ask for. */
function tracesCheck(env: NodeJS.ProcessEnv): Check {
  const { settings, problem, off } = traceSettings(env);
  if (problem) return { name: "traces", ok: false, detail: problem };
  if (!settings) return { name: "traces", ok: true, detail: `off (${off})` };
  return {
    name: "traces",
    ok: true,
    detail: `each run exports a trace over ${settings.protocol} to ${traceEndpoint(env)} after its result line (the collector is not asked until then)`,
  };
}

/** Where the OTLP exporter sends traces, as the standard variables say, without credentials. */
function traceEndpoint(env: NodeJS.ProcessEnv): string {
  const own = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const text = own || (base ? `${base.replace(/\/+$/, "")}/v1/traces` : "http://localhost:4318/v1/traces");
  try {
    const url = new URL(text);
    url.username = "";
    url.password = "";
    return url.href;
  } catch {
    return text;
  }
}

/** Whether --sandbox works here; it counts against "ready" only when OC_EXEC_SANDBOX asks for one. */
async function sandboxCheck(env: NodeJS.ProcessEnv): Promise<Check> {
  const { sandboxUnavailable } = await import("../hosts/sandbox/sandbox.js");
  const why = await sandboxUnavailable(env);
  const wanted = (env.OC_EXEC_SANDBOX ?? "off").trim();
  const required = wanted !== "" && wanted !== "off";
  return {
    name: "sandbox",
    ok: why === null || !required,
    detail:
      why === null
        ? "--sandbox read-only and workspace-write work here"
        : `--sandbox read-only and workspace-write cannot work here: ${why}${required ? ` (OC_EXEC_SANDBOX=${wanted} asks for one)` : ""}`,
  };
}

type ConfiguredProvider = { name: string; source: string; hasKey: boolean };

/**
 * The providers opencode's configuration declares, and where. A custom provider (a gateway, a
 * local model) carries its own apiKey there, so it counts as credentials too.
 */
function configuredProviders(env: NodeJS.ProcessEnv, workspace: string): ConfiguredProvider[] {
  return readOpencodeConfigs(env, workspace).flatMap(({ source, config }) =>
    Object.entries(config.provider ?? {}).map(([name, provider]) => ({
      name,
      source,
      hasKey: typeof provider?.options?.apiKey === "string" && provider.options.apiKey !== "",
    })),
  );
}
