// stdout's file when it is one (`oc-exec … > events.jsonl`): oc-exec's own output, never the agent's
// work (--fail-on no-changes read it as a change), and never a stream to resume from (the shell
// emptied it before oc-exec started). Linux names it.
import { fstatSync, realpathSync } from "node:fs";

export function stdoutFile(): string | null {
  try {
    return fstatSync(1).isFile() ? realpathSync("/proc/self/fd/1") : null;
  } catch {
    return null;
  }
}
