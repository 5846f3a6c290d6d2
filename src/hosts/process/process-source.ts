// `opencode run` as an upstream source: the process's stdout is its event stream and its stderr
// its log, both split into lines; stopping it is SIGTERM to the whole process tree, then SIGKILL
// after the grace period (at once when forced).
import { LineSplitter, type SplitterOptions } from "../../domain/events/line-splitter.js";
import type { UpstreamSource } from "../../domain/events/upstream-source.js";
import type { Invocation } from "../../domain/opencode/invocation.js";
import { startProcess } from "../../sys/process.js";

export type ProcessSourceOptions = {
  killAfterMs: number;
  split: { stdout: SplitterOptions; stderr: SplitterOptions };
};

export function processSource(invocation: Invocation, options: ProcessSourceOptions): UpstreamSource {
  return {
    startsOpencode: true,
    start(sink) {
      const stdout = new LineSplitter((line) => sink.eventLine(line), options.split.stdout);
      const stderr = new LineSplitter((line) => sink.logLine(line.text), options.split.stderr);
      const running = startProcess(invocation, { stdout: (c) => stdout.push(c), stderr: (c) => stderr.push(c) });
      const done = running.done.then((ended) => {
        stdout.end();
        stderr.end();
        return ended.spawnError !== null
          ? {
              process: null,
              failure: {
                name: "SpawnError",
                message: `could not start opencode at ${invocation.file}: ${ended.spawnError}`,
              },
              lost: null,
            }
          : { process: { exitCode: ended.exitCode, signal: ended.signal }, failure: null, lost: null };
      });
      return {
        done,
        hold: (held) => running.holdStdout(held),
        stop: (force) => running.stop({ force, graceMs: options.killAfterMs }),
      };
    },
  };
}
