// The environment variables oc-exec itself reads: all of them, here and nowhere else.
export type OcExecEnvironment = {
  /** OC_EXEC_OPENCODE: the opencode binary to use when no option names one. */
  opencode: string | null;
  /** OC_EXEC_EXPORT=0: never run `opencode export` after a turn. */
  exportOff: boolean;
  /** OC_EXEC_REHEARSE=SCENARIO: every turn is a rehearsal on the scripted model (as --rehearse). */
  rehearse: string | null;
  /** OC_EXEC_RECORD_EVENTS=FILE: with --attach, append the session's raw server events there (fixtures, bug reports). */
  recordEvents: string | null;
  /** OC_EXEC_WARM=1 (or true): plain turns run on a warm server (as --warm). */
  warm: boolean;
  /** OC_EXEC_WARM_IDLE=DURATION: how long a server --warm started waits without a turn (default 5m). */
  warmIdle: string | null;
  /** OC_EXEC_SSH_CONFIG=FILE: the ssh config file of oc-exec's --ssh connections (ssh -F), e.g. a CI job's own. */
  sshConfig: string | null;
  /** OC_EXEC_SANDBOX_MAX_PROCESSES=N: how many processes a sandbox's commands may have at once (default 4096). */
  sandboxMaxProcesses: string | null;
  /** OC_EXEC_ACP=AGENT: run turns through this ACP agent (as --acp). */
  acp: string | null;
  /** OC_EXEC_REDACT_EXEMPT=NAME,NAME: variables whose values are not secrets, whatever their names say. */
  redactExempt: string[];
};

export function readEnvironment(env: NodeJS.ProcessEnv): OcExecEnvironment {
  return {
    opencode: env.OC_EXEC_OPENCODE || null,
    exportOff: env.OC_EXEC_EXPORT === "0",
    rehearse: env.OC_EXEC_REHEARSE || null,
    recordEvents: env.OC_EXEC_RECORD_EVENTS || null,
    sshConfig: env.OC_EXEC_SSH_CONFIG || null,
    warm: env.OC_EXEC_WARM === "1" || env.OC_EXEC_WARM === "true",
    warmIdle: env.OC_EXEC_WARM_IDLE || null,
    sandboxMaxProcesses: env.OC_EXEC_SANDBOX_MAX_PROCESSES || null,
    acp: env.OC_EXEC_ACP || null,
    redactExempt: (env.OC_EXEC_REDACT_EXEMPT ?? "").split(",").flatMap((n) => (n.trim() ? [n.trim()] : [])),
  };
}
