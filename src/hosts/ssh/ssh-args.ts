// The OpenSSH client's command lines, and what its failures mean. Pure: tested without processes.
// oc-exec runs the system's `ssh`, so the user's ~/.ssh/config, agent, ProxyJump and known hosts
// apply as they would by hand; these defaults only fit it to an unattended job.
import { hostOf, type SshSpec, splitDestination } from "../../plan/ssh-spec.js";

export type SshArgsInput = {
  spec: Pick<SshSpec, "destination" | "options" | "configFile">;
  /** The control socket shared by the run's connections. */
  controlPath: string;
  connectTimeoutMs: number | null;
};

/** Options every connection of the run gets, before the user's own. */
function baseOptions(input: SshArgsInput): string[] {
  const options = [
    "BatchMode=yes",
    "StrictHostKeyChecking=accept-new",
    // ssh's "Warning: Permanently added …" would otherwise read as the command's stderr.
    "LogLevel=ERROR",
    // A connection that goes silent is noticed in about 45 s, not when TCP gives up.
    "ServerAliveInterval=15",
    "ServerAliveCountMax=3",
  ];
  if (input.connectTimeoutMs !== null)
    options.push(`ConnectTimeout=${Math.max(1, Math.ceil(input.connectTimeoutMs / 1000))}`);
  return options;
}

function optionArgs(input: SshArgsInput): string[] {
  // ssh keeps the first value it is given for an option: the user's come first, so they win.
  // The control socket is oc-exec's own, whatever the user's config says.
  const options = [`ControlPath=${input.controlPath}`, ...input.spec.options, ...baseOptions(input)];
  return [
    ...(input.spec.configFile !== null ? ["-F", input.spec.configFile] : []),
    ...options.flatMap((o) => ["-o", o]),
  ];
}

function targetArgs(destination: string): string[] {
  const { target, port } = splitDestination(destination);
  // "--" so a destination can never be read as an option.
  return [...(port !== null ? ["-p", port] : []), "--", target];
}

/** The master connection: authenticates once; later connections share it. It ends with oc-exec. */
export function masterArgs(input: SshArgsInput): string[] {
  return ["-M", "-N", "-T", "-o", "ControlPersist=no", ...optionArgs(input), ...targetArgs(input.spec.destination)];
}

/** A command over the shared connection (a direct one if the master is gone). */
export function commandArgs(input: SshArgsInput, remoteCommand: string): string[] {
  return ["-T", "-o", "ControlMaster=no", ...optionArgs(input), ...targetArgs(input.spec.destination), remoteCommand];
}

/** Asks the master to forward a local loopback port to one on the host's loopback (`ssh -O forward -L`). */
export function forwardArgs(input: SshArgsInput, localPort: number, remotePort: number): string[] {
  return [
    "-O",
    "forward",
    "-L",
    `127.0.0.1:${localPort}:127.0.0.1:${remotePort}`,
    ...optionArgs(input),
    ...targetArgs(input.spec.destination),
  ];
}

/** Asks the master to end (`ssh -O exit`). */
export function exitMasterArgs(input: SshArgsInput): string[] {
  return ["-O", "exit", ...optionArgs(input), ...targetArgs(input.spec.destination)];
}

/** Why ssh could not connect, from its stderr (exit 255): a name for scripts and a message. */
export function sshFailure(destination: string, stderr: string): { name: string; message: string } {
  const said =
    stderr
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("@@@"))
      // ssh prefixes its own complaints with "ssh: ", which the message already says.
      .map((l) => l.replace(/^ssh: /, ""))
      .slice(-3)
      .join(" ") || "ssh exited 255 and said nothing";
  const host = hostOf(destination);
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed|host key .* (changed|differs)/i.test(stderr))
    return {
      name: "SshHostKeyMismatch",
      message: `${host}'s host key is not the one known for it (ssh: ${said}). If the host was rebuilt, remove the old key with ssh-keygen -R ${host}; otherwise something is between you and it`,
    };
  if (/Permission denied|Too many authentication failures|no (matching|mutual) .*(key|auth)/i.test(stderr))
    return {
      name: "SshAuthFailed",
      message: `${host} refused to let oc-exec in (ssh: ${said}). ssh runs with BatchMode=yes: it needs a key (or an agent) the host accepts, never a password`,
    };
  return { name: "SshUnreachable", message: `cannot reach ${destination} over ssh (ssh: ${said})` };
}
