// The ssh host a turn asks for, as the plan holds it, and the checks made on it while planning.
// The ssh command lines built from it are the ssh host's (hosts/ssh/ssh-args.ts).

export type SshSpec = {
  /** [user@]host[:port], or a Host alias from the ssh config. */
  destination: string;
  /** --ssh-option KEY=VALUE, each passed as `-o KEY=VALUE` before the defaults (so they win). */
  options: string[];
  /** OC_EXEC_SSH_CONFIG: an ssh config file used instead of ~/.ssh/config (ssh -F), or null. */
  configFile: string | null;
  /** The working directory on the host (--dir), or null for the login directory. */
  dir: string | null;
  /** Variables (names, or patterns with *) whose values go to the remote turn (--pass-env). */
  passEnv: string[];
};

/** host and port from [user@]host[:port] ([v6]:port too); an alias stays whole. */
export function splitDestination(destination: string): { target: string; port: string | null } {
  const m = /^((?:[^@\s]+@)?)(\[[^\]]+\]|[^:\s]+)(?::(\d{1,5}))?$/.exec(destination);
  if (!m) return { target: destination, port: null };
  const host = m[2]!.startsWith("[") ? m[2]!.slice(1, -1) : m[2]!;
  return { target: `${m[1]}${host}`, port: m[3] ?? null };
}

/** The destination's host, for messages: no user, no port. */
export function hostOf(destination: string): string {
  return splitDestination(destination).target.replace(/^[^@]*@/, "");
}

/** A destination ssh would take: no option-looking or blank value, and a port in range. */
export function destinationProblem(destination: string): string | null {
  if (destination.trim() === "" || /\s/.test(destination)) return "an empty destination or one with spaces";
  if (destination.startsWith("-")) return "a destination that starts with -";
  const { port } = splitDestination(destination);
  if (port !== null && (Number(port) < 1 || Number(port) > 65535)) return `port ${port}, outside 1-65535`;
  return null;
}
