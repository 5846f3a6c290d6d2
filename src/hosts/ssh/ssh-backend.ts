// The ssh backend: one `opencode run` turn on another host, through the system's OpenSSH client.
// Made once per run: one master connection (authenticated once, ended with the run), the remote
// opencode's version learned over it. Each turn is `ssh … sh -c SCRIPT` (remote-script.ts), with
// the environment oc-exec sets, the arguments and the prompt on stdin. The workspace is on the
// host: oc-exec checks nothing of it here and reports changes from the tools' own writes.

import { rmSync } from "node:fs";
import { join } from "node:path";
import { splitterOptions } from "../../domain/events/split-options.js";
import {
  ALL_FEATURES,
  type Features,
  knownFeatures,
  majorOf,
  parseRunHelp,
  sharedServiceProblem,
  V2_FEATURES,
} from "../../domain/opencode/features.js";
import { buildInvocation, type Invocation, unsupportedFlags } from "../../domain/opencode/invocation.js";
import { lastLine, runSideCommand } from "../../domain/opencode/side-command.js";
import { cachedRemote, rememberRemote } from "../../domain/opencode/version.js";
import type { Backend } from "../../engine/backend.js";
import type { LaunchProblem } from "../../kernel/problem.js";
import { DEFAULTS } from "../../plan/options.js";
import { runFields } from "../../plan/run-fields.js";
import { hostOf, type SshSpec } from "../../plan/ssh-spec.js";
import { parseExport } from "../process/session-commands.js";
import { makeControlDir, SSH, startMaster } from "./master.js";
import { remoteCheck, remoteLaunch } from "./remote-launch.js";
import { preamble, type RemoteRun, remoteCommand, SCRIPT_EXIT } from "./remote-script.js";
import { commandArgs, type SshArgsInput, sshFailure } from "./ssh-args.js";
import { sshSource } from "./ssh-source.js";

export type SshBackendSpec = {
  ssh: SshSpec;
  /** The binary on the host: a name on its PATH or a path there; null: `opencode`. */
  opencode: string | null;
  env: NodeJS.ProcessEnv;
  /** ssh's ConnectTimeout (--startup-timeout), or null for ssh's own. */
  connectTimeoutMs: number | null;
};

type Side = (run: Omit<RemoteRun, "mode" | "graceSeconds">, timeoutMs?: number) => ReturnType<typeof runSideCommand>;

/** Where the binary is on the host and a stamp of it: `ls` costs milliseconds, `opencode --version` a second or more. */
const STAMP = 'p=$(command -v -- "$1") || exit 98; ls -lLnd -- "$p"';

/** The remote opencode's version and features: from the cache while the binary is unchanged, else asked. */
async function detectRemote(
  side: Side,
  destination: string,
  binary: string,
  env: NodeJS.ProcessEnv,
): Promise<{ version: string | null; features: Features } | { problem: LaunchProblem }> {
  const host = hostOf(destination);
  const notFound = {
    name: "OpencodeNotFound",
    message: `${binary} is not on ${host}'s PATH: install opencode there, or name it with --opencode (a path on ${host})`,
  };
  const stamped = await side({ dir: null, env: {}, argv: ["/bin/sh", "-c", STAMP, "sh", binary] }, 30_000);
  if (stamped.exitCode === 255) return { problem: sshFailure(destination, stamped.stderr) };
  if (stamped.exitCode === SCRIPT_EXIT.notFound) return { problem: notFound };
  const key = `ssh://${destination}/${binary}`;
  const stamp = stamped.ok ? stamped.stdout.trim() : null;
  const cached = stamp ? cachedRemote(env, key, stamp) : null;
  if (cached) return cached;
  const out = await side({ dir: null, env: {}, argv: [binary, "--version"] }, 30_000);
  if (out.exitCode === SCRIPT_EXIT.notFound) return { problem: notFound };
  if (out.exitCode === 255) return { problem: sshFailure(destination, out.stderr) };
  const version = /(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(out.stdout)?.[1] ?? null;
  let features = knownFeatures(version) ?? ((majorOf(version) ?? 0) >= 2 ? V2_FEATURES : ALL_FEATURES);
  // 2.x there: its flags from its help, --standalone above all (features.ts); unreadable, none assumed.
  if (knownFeatures(version) === null && (majorOf(version) ?? 0) >= 2) {
    const help = await side({ dir: null, env: {}, argv: [binary, "run", "--help"] }, 30_000);
    if (help.ok && help.stdout.includes("--")) features = parseRunHelp(help.stdout);
  }
  if (stamp && version) rememberRemote(env, key, stamp, { version, features });
  return { version, features };
}

export async function makeSshBackend(spec: SshBackendSpec): Promise<Backend> {
  const { ssh } = spec;
  const binary = spec.opencode ?? "opencode";
  const host = hostOf(ssh.destination);
  const controlDir = makeControlDir();
  const args: SshArgsInput = { spec: ssh, controlPath: join(controlDir, "c"), connectTimeoutMs: spec.connectTimeoutMs };
  const master = await startMaster(args, spec.env);
  const close = async () => {
    if ("stop" in master) await master.stop();
    rmSync(controlDir, { recursive: true, force: true });
  };
  /** A short command on the host, over the master connection. */
  const side: Side = (run, timeoutMs = DEFAULTS.sessionCommandTimeoutMs) =>
    runSideCommand(SSH, commandArgs(args, remoteCommand()), {
      env: spec.env,
      timeoutMs,
      input: preamble({ ...run, mode: "side", graceSeconds: 1 }, ""),
    });

  const launchSpec = (killAfterMs: number) => ({
    args,
    dir: ssh.dir,
    passEnv: ssh.passEnv,
    env: spec.env,
    killAfterMs,
  });
  const found =
    "problem" in master ? { problem: master.problem } : await detectRemote(side, ssh.destination, binary, spec.env);
  const version = "problem" in found ? null : found.version;
  const features = "problem" in found ? ALL_FEATURES : found.features;
  // 2.x on the host: `run --standalone` keeps the turn off its shared background service; a 2.x
  // without it never gets the turn, and no side command (export, session delete) reaches it.
  const shared = sharedServiceProblem(version, features, ` on ${ssh.destination}`);
  const problem: LaunchProblem | null =
    "problem" in found ? found.problem : shared ? { name: "UnsupportedRelease", message: shared } : null;
  const sessionCommand = async (what: string, argv: string[]) => {
    const out = await side({ dir: ssh.dir, env: {}, argv: [binary, ...argv] });
    return out.ok
      ? { ok: true as const, stdout: out.stdout }
      : {
          ok: false as const,
          error: `${what} on ${host} failed${out.stderr.trim() ? `: ${lastLine(out.stderr)}` : ""}`,
        };
  };
  return {
    opencode: { path: binary, version, host: ssh.destination },
    remote: { host: ssh.destination, dir: ssh.dir },
    problem,
    close,
    check(plan) {
      const missing = [
        ...unsupportedFlags(runFields(plan), features),
        ...(features.standalone && plan.session.ephemeral
          ? ["--ephemeral (its session delete would reach the shared service)"]
          : []),
      ];
      return {
        warnings:
          version !== null && knownFeatures(version) === null
            ? [
                {
                  code: "untested_opencode",
                  message: `opencode ${version} on ${host} is not a release oc-exec was tested with; its output may differ`,
                },
              ]
            : [],
        problem:
          missing.length > 0
            ? {
                name: "UnsupportedFlag",
                message: `opencode ${version} on ${host} does not support ${missing.join(", ")}`,
              }
            : null,
      };
    },
    // A --verify check runs on the host, in --dir there, as the turn did.
    async wrapCommand(command) {
      return remoteCheck(launchSpec(DEFAULTS.killAfterMs), command);
    },
    async open(plan, input) {
      const { opencodeConfig } = plan.placement;
      if ("problem" in opencodeConfig) return { problem: opencodeConfig.problem };
      if (problem) return { problem };
      // The remote script changes to --dir first: opencode's workspace is then where it runs.
      const workspace = ".";
      const built = buildInvocation({
        ...runFields(plan),
        binary,
        workspace,
        prompt: input.prompt,
        title: input.title,
        permission: input.policy,
        configContent: opencodeConfig.content,
        baseEnv: plan.placement.env,
        features,
      });
      const invocation: Invocation = {
        ...remoteLaunch(
          launchSpec(plan.turn.killAfterMs),
          { file: built.file, args: built.args, env: built.env },
          built.input,
          plan.placement.env,
        ),
        cwd: process.cwd(),
      };
      return {
        source: sshSource(invocation, {
          destination: ssh.destination,
          binary,
          killAfterMs: plan.turn.killAfterMs,
          split: splitterOptions(plan.turn.maxLineBytes, plan.turn.maxOutputBytes),
        }),
        ops: {
          export: features.standalone
            ? null
            : async (id) => {
                const out = await sessionCommand(`opencode export ${id}`, ["export", id]);
                if (!out.ok) return { error: out.error };
                return parseExport(out.stdout, id);
              },
          async delete(id) {
            const out = await sessionCommand(`opencode session delete ${id}`, ["session", "delete", id]);
            return out.ok ? true : { error: out.error };
          },
          sessionId: null,
        },
      };
    },
  };
}
