// A turn over ssh as an upstream source: ssh's stdout is the remote opencode's event stream, and
// its stderr carries opencode's log, the remote script's marker lines (remote-script.ts) and ssh's
// own complaints. Stopping it closes ssh's stdin (the remote script then ends opencode and its
// tools); ssh itself is killed only if the remote side does not answer within the grace period.
import { constants } from "node:os";
import { LineSplitter, type SplitterOptions } from "../../domain/events/line-splitter.js";
import type { SourceEnd, UpstreamSource } from "../../domain/events/upstream-source.js";
import type { Invocation } from "../../domain/opencode/invocation.js";
import { hostOf } from "../../plan/ssh-spec.js";
import { startProcess } from "../../sys/process.js";
import { parseMarker, SCRIPT_EXIT } from "./remote-script.js";
import { sshFailure } from "./ssh-args.js";

export type SshSourceOptions = {
  destination: string;
  /** The remote binary's name, for messages. */
  binary: string;
  killAfterMs: number;
  split: { stdout: SplitterOptions; stderr: SplitterOptions };
};

/** After the grace period the remote side has to stop the turn, how long ssh may take to report it. */
const REPORT_MARGIN_MS = 5_000;

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n as number, name]));

/** The remote command's end from its shell status: 128+N is signal N. */
function remoteEnd(status: number): { exitCode: number | null; signal: string | null } {
  const signal = status > 128 ? SIGNAL_NAMES.get(status - 128) : undefined;
  return signal ? { exitCode: null, signal } : { exitCode: status, signal: null };
}

export function sshSource(invocation: Invocation, options: SshSourceOptions): UpstreamSource {
  const host = hostOf(options.destination);
  return {
    startsOpencode: true,
    start(sink) {
      let started = false;
      let remoteStatus: number | null = null;
      let problem: string | null = null;
      let stopped = false;
      // ssh's own lines before the remote script started: why it could not connect, if it could not.
      const sshSaid: string[] = [];
      const stdout = new LineSplitter((line) => sink.eventLine(line), options.split.stdout);
      const stderr = new LineSplitter((line) => {
        const marker = parseMarker(line.text);
        if (marker?.kind === "started") started = true;
        else if (marker?.kind === "exit") remoteStatus = marker.status;
        else if (marker?.kind === "problem") problem = marker.what;
        else if (started) sink.logLine(line.text);
        else sshSaid.push(line.text);
      }, options.split.stderr);
      const running = startProcess(
        invocation,
        { stdout: (c) => stdout.push(c), stderr: (c) => stderr.push(c) },
        { keepInputOpen: true },
      );
      const done = running.done.then((ended): SourceEnd => {
        stdout.end();
        stderr.end();
        running.endInput();
        if (ended.spawnError !== null)
          return {
            process: null,
            failure: { name: "SpawnError", message: `could not start ssh: ${ended.spawnError}` },
            lost: null,
          };
        if (remoteStatus !== null) return { process: remoteEnd(remoteStatus), failure: null, lost: null };
        if (problem === "not-found" || ended.exitCode === SCRIPT_EXIT.notFound)
          return {
            process: null,
            failure: {
              name: "OpencodeNotFound",
              message: `${options.binary} is not on ${host}'s PATH (name another with --opencode, a path on ${host})`,
            },
            lost: null,
          };
        if (problem === "no-dir")
          return {
            process: null,
            failure: { name: "WorkspaceError", message: `the directory does not exist on ${host}` },
            lost: null,
          };
        if (!started)
          return {
            process: null,
            failure:
              ended.exitCode === 255 || ended.signal !== null
                ? sshFailure(options.destination, sshSaid.join("\n"))
                : {
                    name: "SshRemoteError",
                    message: `the remote side of oc-exec failed on ${host} (exit ${ended.exitCode}${problem ? `, ${problem}` : ""})${sshSaid.length ? `: ${sshSaid.slice(-2).join(" ")}` : ""}`,
                  },
            lost: null,
          };
        // Started, and no word of how it ended: oc-exec stopped it, or the connection went.
        if (stopped) return { process: { exitCode: null, signal: "SIGKILL" }, failure: null, lost: null };
        return {
          process: null,
          failure: null,
          lost: {
            name: "SshConnectionLost",
            message: `the connection to ${host} was lost mid-turn (ssh ${ended.signal ? `killed by ${ended.signal}` : `exit ${ended.exitCode}`}${sshSaid.length ? `: ${sshSaid.at(-1)}` : ""}); the remote side ends opencode when it notices`,
          },
        };
      });
      return {
        done,
        hold: (held) => running.holdStdout(held),
        stop(force) {
          stopped = true;
          running.endInput();
          running.stop({ force, term: false, graceMs: options.killAfterMs + REPORT_MARGIN_MS });
        },
      };
    },
  };
}
