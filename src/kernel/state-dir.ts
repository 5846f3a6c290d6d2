// oc-exec's own state directory: its server records, the sandbox's CA and opencode state, kept
// where no sandbox can read them. One place, so every part of oc-exec agrees on where it is.
import { join } from "node:path";
import { xdgHome } from "./xdg.js";

export function ocExecStateDir(env: NodeJS.ProcessEnv): string {
  // Under GitHub Actions, in the job's own temporary directory: a self-hosted runner's next job
  // never finds this one's servers (nor their passwords), and the directory goes with the job.
  if (env.GITHUB_ACTIONS === "true" && env.RUNNER_TEMP) return join(env.RUNNER_TEMP, "oc-exec");
  return join(xdgHome(env, "state"), "oc-exec");
}
