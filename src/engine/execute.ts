// Runs one turn from start to `result` on a backend made by the caller (hosts/make-backend.ts): the one
// prologue (prepare.ts), the backend's upstream source, the work after it, then the result
// (turn-core.ts, shared with replay). Every backend shares everything after the source: timers,
// budgets, the normalizer, the classifier and the result.
// Each stage returns what it found; the classifier's input is assembled here, once.
// Every path ends in exactly one result event, including bugs in this file.

import { relative } from "node:path";
import type { OcEvent, ResultEvent } from "../contract/schema.js";
import type { TurnEnd } from "../domain/outcome/classify.js";
import { errorText } from "../domain/outcome/errors.js";
import type { ResultMeta } from "../domain/outcome/result.js";
import type { Limit } from "../kernel/duration.js";
import type { LaunchProblem } from "../kernel/problem.js";
import { type ResolvedTurn, turnTimedOut } from "../plan/resolve-options.js";
import { SANDBOX_EMPTY_FILES, SANDBOX_MOUNT_POINTS } from "../plan/sandbox-spec.js";
import { type PlannedWrite, writePlanned } from "../sys/safe-write.js";
import { type AfterTurn, afterTurn } from "./after-turn.js";
import { runAttempts } from "./attempts.js";
import type { Backend } from "./backend.js";
import type { TurnControl } from "./control.js";
import { announceTurn, prepareTurn } from "./prepare.js";
import type { SourceRun } from "./run-source.js";
import { createTurnCore, type TurnCore } from "./turn-core.js";
import { verifyRounds, wouldSucceed } from "./verify-rounds.js";
import { agentFileKind, agentFilesChanged } from "./workspace/agent-files.js";
import { hiddenChanges } from "./workspace/hidden-changes.js";
import { removeOutsideLinks, removeSpecialFiles } from "./workspace/outside-links.js";
import {
  takeWorkspaceSnapshot,
  type WorkspaceChanges,
  type WorkspaceSnapshot,
  workspaceChangesSince,
} from "./workspace/snapshot.js";
import { surveyWorkspace } from "./workspace/survey.js";
import { dropPatchBase, type PatchBase, turnPatch } from "./workspace/turn-patch.js";

export async function executeTurn(
  options: ResolvedTurn,
  /** Made once by the caller; a promise when the caller did not wait for it (a bug making it is this turn's). */
  backend: Backend | Promise<Backend>,
  sink: (event: OcEvent) => void,
  control: TurnControl,
): Promise<ResultEvent> {
  control.follow(options.turn.signal);
  // With another attempt possible, events carry their attempt and the result counts them.
  const retrying = options.turn.retry > 0 || options.turn.fallbackModel !== null;
  // What oc-exec's policy removed: the caller's rules, and (once the backend is known) its own.
  // A policy that does not build is reported by the turn's prologue; meanwhile it removes nothing.
  const removed = new Set("removed" in options.placement.policy ? options.placement.policy.removed : []);
  const core = createTurnCore(
    {
      workspace: options.placement.dir,
      redactor: options.turn.redactor,
      session: options.session.id,
      continue: options.session.continue,
      fork: options.session.fork,
      maxOutputBytes: options.turn.maxOutputBytes,
      maxLineBytes: options.turn.maxLineBytes,
      includeRaw: options.turn.includeRaw,
      clock: options.turn.clock,
      rules: options.turn.rules,
      onToolStarted: options.turn.onToolStarted ?? undefined,
      removedByPolicy: removed,
      attempts: retrying,
    },
    sink,
  );
  let ran: SourceRun | null = null;
  let after: AfterTurn | null = null;
  let problem: LaunchProblem | null = null;
  let bug: { message: string } | null = null;
  let workspace: WorkspaceChanges | undefined;
  let sandbox: ResultMeta["sandbox"];
  let verification: ResultMeta["verification"];
  let verified: TurnEnd["verification"] = null;
  let attempts: ResultMeta["attempts"];
  let outputPatch: ResultMeta["outputPatch"];
  let patchRefused: { name: string; message: string } | null = null;
  let opened: Awaited<ReturnType<typeof prepareTurn>> | null = null;
  const startedAt = Date.now();
  try {
    // Making the backend may take a while (a binary asked for its version, a server reached): a
    // signal or --timeout ends the turn meanwhile, instead of after it.
    const made = await unlessStopped(
      backend,
      control,
      options.turn.timeout === null ? null : startedAt + options.turn.timeout.ms,
      options.turn.timeout,
    );
    // Stopped first: the turn says it started, and ends with the stop's class.
    if (made === null) announceTurn(options, core, null);
    else {
      for (const key of made.removes ?? []) removed.add(key);
      for (const value of made.secrets ?? []) options.turn.redactor.add(value);
      opened = await prepareTurn(options, core, made);
      if ("problem" in opened) problem = opened.problem;
      else {
        // What the workspace holds before opencode starts, to tell what the turn changed in it.
        // Over ssh the workspace is on the host: the tools' own writes say what changed.
        const snapshot: WorkspaceSnapshot = made.remote
          ? { dir: options.placement.dir, skipped: `the workspace is on ${made.remote.host}` }
          : takeWorkspaceSnapshot(options.placement.dir);
        // The workspace's links and the files agents load (opencode's configuration among them)
        // before a sandboxed turn, read from the disk (git's view is the agent's to steer): what the
        // turn made of them is checked after it.
        const surveyedAt = Date.now();
        const surveyed =
          made.sandbox && !made.remote ? surveyWorkspace(options.placement.dir, SANDBOX_EMPTY_FILES) : null;
        const deadline = options.turn.timeout === null ? null : startedAt + options.turn.timeout.ms;
        const tried = await runAttempts(opened, { options, core, control, backend: made, deadline });
        ran = tried.ran;
        problem = tried.problem;
        const refused = tried.refused;
        if (retrying) attempts = { attempts: tried.attempts, failed: tried.failed };
        if (ran && !problem && options.turn.verify !== null && wouldSucceed(core, ran, options)) {
          const checked = await verifyRounds(ran, {
            options,
            core,
            control,
            backend: made,
            opened: tried.opened,
            input: opened.input,
            deadline,
            attempts: tried.attempts,
          });
          ran = { ...checked.ran, stop: checked.ran.stop ?? checked.stop };
          problem = checked.problem;
          verification = checked.verification;
          verified = checked.outcome;
          refused.push(...checked.refused);
          if (retrying) attempts = { attempts: checked.attempts, failed: [...tried.failed, ...checked.failed] };
        }
        // Before oc-exec writes anything after the turn (-o, the patch, the reports): the turn's links
        // that lead out of the workspace are gone, so none of those writes meets one.
        // One walk after the turn serves every check.
        const now =
          surveyed &&
          surveyWorkspace(options.placement.dir, SANDBOX_EMPTY_FILES, { since: surveyedAt, dirs: surveyed.dirs });
        const outsideLinks =
          surveyed && now ? removeOutsideLinks(options.placement.dir, surveyed.links, now.links) : [];
        const specialFiles =
          surveyed && now ? removeSpecialFiles(options.placement.dir, surveyed.links, now.links) : [];
        // What was removed is no longer there for the next agent to load.
        for (const gone of [...outsideLinks, ...specialFiles]) if (gone.removed) now?.agentFiles.delete(gone.path);
        const agentFiles =
          surveyed && now ? agentFilesChanged(surveyed.agentFiles, now.agentFiles) : { opencode: [], others: [] };
        after = await afterTurn(options, core.normalizer, tried.opened.ops, ran?.stop ?? control.reason, opened.output);
        workspace = workspaceChangesSince(
          snapshot,
          core.normalizer.facts.filesChanged,
          options.turn.ownOutputs,
          made.sandbox ? SANDBOX_MOUNT_POINTS : [],
        );
        if (opened.patchBase && options.turn.outputPatch) {
          const base = opened.patchBase;
          opened.patchBase = null;
          // A sandbox leaves empty files where it mounted over missing paths until it is reset.
          const mountPoints = made.sandbox ? SANDBOX_MOUNT_POINTS : [];
          outputPatch =
            writeTurnPatch(base, mountPoints, opened.patch!, options.turn.outputPatch.option, core, (refused) => {
              patchRefused = refused;
            }) ?? undefined;
        }
        // What changed where git does not look: not in workspace_changes, nor named as agent files,
        // nor what was removed above, nor oc-exec's own outputs.
        const hidden = now
          ? hiddenChanges(
              now.changed,
              [
                ...(workspace?.files ?? []).map((f) => f.path),
                ...agentFiles.opencode,
                ...agentFiles.others,
                ...[...outsideLinks, ...specialFiles].filter((f) => f.removed).map((f) => f.path),
              ],
              options.turn.ownOutputs.map((p) => relative(options.placement.dir, p)),
              now.movedIn,
            )
          : [];
        if (made.sandbox)
          sandbox = sandboxReport(
            made.sandbox,
            refused.flatMap((f) => f()),
            workspace?.files ?? [],
            core,
            options,
            outsideLinks,
            specialFiles,
            agentFiles,
            { paths: hidden, inGit: workspace?.source === "git" },
          );
      }
    }
  } catch (error) {
    bug = { message: errorText(error) };
  } finally {
    if (opened && "patchBase" in opened && opened.patchBase) dropPatchBase(opened.patchBase);
  }
  const end: TurnEnd = {
    stop: ran?.stop ?? control.reason,
    launchError: problem ?? ran?.failure ?? null,
    internalError: ran?.internalError ?? bug,
    process: ran?.process ?? null,
    outputError: after?.outputError ?? null,
    refusedWrite: after?.refusedWrite ?? patchRefused,
    lost: ran?.lost ?? null,
    workspaceChanges: workspace ?? null,
    verification: verified,
  };
  return core.finish(end, {
    model: after?.model ?? options.turn.model,
    costUsd: after?.costUsd,
    structuredOutput: after?.structuredOutput,
    sessionDeleted: after?.sessionDeleted,
    workspaceChanges: workspace,
    sandbox,
    verification,
    attempts,
    outputPatch,
  });
}

/** The backend, or null when the turn is stopped (a signal, the abort signal, --timeout) first. */
async function unlessStopped(
  backend: Backend | Promise<Backend>,
  control: TurnControl,
  deadline: number | null,
  timeout: Limit | null,
): Promise<Backend | null> {
  if (control.reason) return null;
  let unsubscribe = () => {};
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<null>((resolve) => {
    unsubscribe = control.subscribe(() => {
      control.giveUpStartup();
      resolve(null);
    });
    if (deadline !== null)
      timer = setTimeout(() => control.abort(turnTimedOut(timeout)), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([backend, stopped]);
  } finally {
    unsubscribe();
    clearTimeout(timer);
  }
}

/**
 * --output-patch: the patch written through the safe writer where it was planned, or null: a
 * refusal (the path became a link, its directory moved, during the turn) is the turn's config
 * error, as --output-last-message's; any other failure a warning.
 */
function writeTurnPatch(
  base: PatchBase,
  mountPoints: readonly string[],
  plan: PlannedWrite,
  label: string,
  core: TurnCore,
  refuse: (problem: { name: string; message: string }) => void,
): ResultMeta["outputPatch"] | null {
  const { path } = plan;
  try {
    const patch = turnPatch(base, mountPoints);
    const failed = writePlanned(plan, patch.text);
    if (failed?.refused) {
      refuse({ name: "OutputPathRefused", message: `${label} ${path} was not written: ${failed.problem}` });
      return null;
    }
    if (failed) throw new Error(failed.problem);
    return { path, files: patch.files, bytes: patch.text.length };
  } catch (error) {
    core.normalizer.warning("output_patch_failed", `could not write ${label} ${path}: ${(error as Error).message}`);
    return null;
  } finally {
    dropPatchBase(base);
  }
}

/** How many paths (links, pipes, configuration files) a warning names; the rest are counted. */
const SHOWN_PATHS = 10;

/** The first SHOWN_PATHS paths, joined, and how many more there are. */
const shown = (paths: readonly string[]) =>
  `${paths.slice(0, SHOWN_PATHS).join(", ")}${paths.length > SHOWN_PATHS ? ` and ${paths.length - SHOWN_PATHS} more` : ""}`;

/** How many of the hidden changes' paths the result keeps (the count is whole). */
const HIDDEN_PATHS_KEPT = 100;

/** Each refused host once as a warning, and the sandbox as the result describes it. */
function sandboxReport(
  info: NonNullable<Backend["sandbox"]>,
  refused: string[],
  changes: readonly { path: string }[],
  core: TurnCore,
  options: ResolvedTurn,
  outside: ReturnType<typeof removeOutsideLinks>,
  special: ReturnType<typeof removeSpecialFiles>,
  /**
   * The files agents load that the turn changed, read from the disk (agent-files.ts): opencode's
   * configuration, and the rest (instructions, other agents' configuration).
   */
  agentFiles: { opencode: readonly string[]; others: readonly string[] },
  /** The files the turn changed that workspace_changes does not show (hidden-changes.ts), and whether it is git's. */
  hidden: { paths: readonly string[]; inGit: boolean },
): ResultMeta["sandbox"] {
  if (special.length > 0)
    core.normalizer.warning(
      "sandbox_special_file",
      `the turn left named pipes or sockets in the workspace: ${shown(special.map((f) => `${f.path}${f.removed ? "" : " (could not be removed)"}`))}; ${special.every((f) => f.removed) ? "removed" : "the rest removed"}, since a later step that reads every file (cat, tar, a linter) would wait on one for ever`,
    );
  if (outside.length > 0)
    core.normalizer.warning(
      "sandbox_outside_link",
      `the turn left links that lead out of the workspace: ${shown(outside.map((l) => `${l.path} -> ${l.target}${l.removed ? "" : " (could not be removed)"}`))}; ${outside.every((l) => l.removed) ? "removed" : "the rest removed"}, since a later step that follows links (zip -r, an artifact upload, a cache) would read what the sandbox hid`,
    );
  for (const host of new Set(refused))
    core.normalizer.warning(
      "sandbox_refused",
      `the sandbox refused a connection to ${host}: not an allowed host (${options.placement.names.allowHosts} ${host} lets it through)`,
    );
  // The tools' own writes and git's listing (workspace changes) count too, as they always did.
  const changed = (kind: "opencode" | "others", disk: readonly string[]) =>
    [
      ...new Set([
        ...changes
          .map((c) => c.path)
          .filter((p) => {
            const k = agentFileKind(p);
            return k !== null && (k === "opencode_config") === (kind === "opencode");
          }),
        ...disk,
      ]),
    ].sort();
  const config = changed("opencode", agentFiles.opencode);
  if (config.length > 0)
    core.normalizer.warning(
      "sandbox_opencode_config",
      `the turn created or changed opencode's configuration in the workspace: ${shown(config)}; the next opencode started there reads it, outside any sandbox too: review it, or discard the workspace`,
    );
  const others = changed("others", agentFiles.others);
  if (others.length > 0)
    core.normalizer.warning(
      "sandbox_agent_files",
      `the turn created, changed or removed files coding agents load on their own (instructions, hooks, MCP servers, skills): ${shown(others)}; the next agent started in the workspace (oc-exec, opencode, claude, gemini, codex…) follows them, outside any sandbox: review them, or discard the workspace`,
    );
  if (hidden.paths.length > 0)
    core.normalizer.warning(
      "sandbox_hidden_changes",
      `the turn created, changed or moved in ${hidden.paths.length} path(s) workspace_changes does not show (${hidden.inGit ? "git does not list them" : "the workspace is not in git: it shows the write tools' own files only"}): ${shown(hidden.paths)}${hidden.paths.some((p) => p.endsWith("/")) ? " (a path ending in / is a directory put in place by the turn, with older files in it)" : ""}; the job's later steps run what is there outside any sandbox (npm test runs node_modules/.bin, python a .venv's site-packages): discard them (git clean -fdX, then install again), or review them`,
    );
  return {
    ...info,
    refused_connections: refused.length,
    opencode_config_changed: config,
    agent_files_changed: others,
    hidden_changes: { count: hidden.paths.length, paths: hidden.paths.slice(0, HIDDEN_PATHS_KEPT) },
  };
}
