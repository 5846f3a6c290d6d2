// What runs on the remote host, and what oc-exec sends it. Pure: tested without processes.
//
// The ssh command line holds one fixed POSIX sh script and nothing of the turn: the remote host's
// other users can read command lines in `ps`, so the environment, the arguments and the prompt all
// travel on stdin. The script reads a preamble (shell assignments, ended by a marker line), then
// the prompt's size and its bytes, and runs the command (in stream mode the command reads the rest
// of stdin instead, relayed through a pipe of its own). For a turn it keeps reading stdin: when
// that ends (oc-exec stopped the turn, died, or the connection went), it ends the command and
// every process below it, TERM then KILL after the grace period. ssh forwards no signal without a
// terminal, so stdin closing is the one message that always arrives. The input is read into a
// temporary file, opened, and the file removed at once: nothing is left on the host however the
// script ends.
//
// The command gets a TMPDIR of its own, removed when it ends: opencode leaves a 5.5 MB copy of a
// native library in TMPDIR at every start (anomalyco/opencode#21427), which would fill the host's
// /tmp a turn at a time. Its name holds the script's pid, so a later script removes the ones whose
// script was killed before it could (the same sweep as oc-exec's own directories). Once the command
// and its watcher run, the script ignores SIGPIPE (they do not inherit that): when the connection
// has gone, sh's "Terminated" about the stopped command would otherwise kill it before it cleans up.

/** Quotes a value for a POSIX shell: single quotes, each inner quote closed, escaped and reopened. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

const PREAMBLE_END = "--oc-exec-preamble-end--";
/** The prefix of the script's own lines on stderr; everything else there is the command's. */
export const MARKER = "oc-exec-ssh:";

/** Exit statuses the script uses for its own failures (the command's are reported in a marker line). */
export const SCRIPT_EXIT = { noPreamble: 96, noDir: 97, notFound: 98, noTemp: 99 } as const;

const REMOTE_SCRIPT = `oc_line=; oc_text=
while IFS= read -r oc_line; do
  [ "$oc_line" = "${PREAMBLE_END}" ] && break
  oc_text="$oc_text$oc_line
"
done
[ "$oc_line" = "${PREAMBLE_END}" ] || { echo "${MARKER} no-preamble" >&2; exit ${SCRIPT_EXIT.noPreamble}; }
oc_mode=side; oc_grace=5; oc_dir=
eval "$oc_text"
IFS= read -r oc_size || oc_size=0
if [ -n "$oc_dir" ]; then cd -- "$oc_dir" 2>/dev/null || { echo "${MARKER} no-dir" >&2; exit ${SCRIPT_EXIT.noDir}; }; fi
command -v -- "$1" >/dev/null 2>&1 || { echo "${MARKER} not-found" >&2; exit ${SCRIPT_EXIT.notFound}; }
oc_tmp=$(mktemp -d "\${TMPDIR:-/tmp}/oc-exec-ssh.XXXXXX") || { echo "${MARKER} no-temp" >&2; exit ${SCRIPT_EXIT.noTemp}; }
head -c "$oc_size" > "$oc_tmp/input"
exec 4< "$oc_tmp/input"
rm -rf "$oc_tmp"
for oc_old in "\${TMPDIR:-/tmp}"/oc-exec-remote-*; do
  oc_of=\${oc_old##*/oc-exec-remote-}; oc_of=\${oc_of%%.*}
  case $oc_of in ''|*[!0-9]*) continue ;; esac
  kill -0 "$oc_of" 2>/dev/null || rm -rf -- "$oc_old" 2>/dev/null
done
if oc_own=$(mktemp -d "\${TMPDIR:-/tmp}/oc-exec-remote-$$.XXXXXX" 2>/dev/null); then export TMPDIR="$oc_own"; else oc_own=; fi
if [ "$oc_mode" = side ]; then "$@" <&4 4<&-; oc_status=$?; [ -z "$oc_own" ] || rm -rf -- "$oc_own"; exit "$oc_status"; fi
oc_tree() {
  ps -A -o pid= -o ppid= 2>/dev/null | awk -v root="$1" '{ p[$1] = $2 }
    END { for (x in p) { y = x; n = 0; while ((y in p) && y != root && n++ < 100) y = p[y]; if (y == root && x != root) print x } }'
}
oc_stop() {
  oc_kids=$(oc_tree "$oc_pid")
  kill -TERM "$oc_pid" $oc_kids
  oc_waited=0
  while kill -0 "$oc_pid" && [ "$oc_waited" -lt "$oc_grace" ]; do sleep 1; oc_waited=$((oc_waited + 1)); done
  kill -KILL "$oc_pid" $oc_kids $(oc_tree "$oc_pid")
}
exec 3<&0
oc_pipe=
if [ "$oc_mode" = stream ]; then
  oc_pipe=$(mktemp -d "\${TMPDIR:-/tmp}/oc-exec-pipe.XXXXXX") && mkfifo "$oc_pipe/in" || { echo "${MARKER} no-temp" >&2; exit ${SCRIPT_EXIT.noTemp}; }
  "$@" < "$oc_pipe/in" 3<&- 4<&- &
else
  "$@" <&4 3<&- 4<&- &
fi
oc_pid=$!
echo "${MARKER} started $oc_pid $(pwd)" >&2
if [ "$oc_mode" = stream ]; then
  ( cat <&3 > "$oc_pipe/in"; oc_stop ) >/dev/null 2>&1 &
else
  ( cat <&3; oc_stop ) >/dev/null 2>&1 &
fi
oc_watch=$!
trap '' PIPE
exec 3<&- 4<&-
wait "$oc_pid"; oc_status=$?
kill $(oc_tree "$oc_watch") "$oc_watch" 2>/dev/null
[ -z "$oc_own" ] || rm -rf -- "$oc_own"
[ -z "$oc_pipe" ] || rm -rf -- "$oc_pipe"
echo "${MARKER} exit $oc_status" >&2
exit "$oc_status"`;

/** The remote command ssh is given: the script, run by sh whatever the login shell is. */
export function remoteCommand(): string {
  return `exec /bin/sh -c ${shellQuote(REMOTE_SCRIPT)}`;
}

export type RemoteRun = {
  /**
   * turn: stdin stays open and its end stops the command; stream: the same, and the command reads
   * the rest of stdin (an ACP agent's JSON-RPC); side: a short command, run to its end.
   */
  mode: "turn" | "stream" | "side";
  /** The remote working directory, or null for the login directory. */
  dir: string | null;
  /** Seconds between TERM and KILL when the turn is stopped. */
  graceSeconds: number;
  /** Variables set for the command, on top of the remote login environment. */
  env: Record<string, string>;
  /** The command: its file (looked up on the remote PATH) and arguments. */
  argv: string[];
};

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What goes on ssh's stdin before the command's own input: the preamble and the input's size. */
export function preamble(run: RemoteRun, input: Buffer | string): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(run.env)) {
    // A name a shell cannot assign is dropped rather than evaluated.
    if (NAME.test(key)) lines.push(`export ${key}=${shellQuote(value)}`);
  }
  lines.push(`oc_mode=${run.mode}`, `oc_grace=${Math.max(1, Math.ceil(run.graceSeconds))}`);
  if (run.dir !== null) lines.push(`oc_dir=${shellQuote(run.dir)}`);
  lines.push(`set -- ${run.argv.map(shellQuote).join(" ")}`);
  return `${lines.join("\n")}\n${PREAMBLE_END}\n${Buffer.byteLength(input)}\n`;
}

export type Marker =
  | { kind: "started"; cwd: string | null }
  | { kind: "exit"; status: number }
  | { kind: "problem"; what: string };

/** One of the script's own stderr lines, or null for the command's. */
export function parseMarker(line: string): Marker | null {
  if (!line.startsWith(`${MARKER} `)) return null;
  const rest = line.slice(MARKER.length + 1);
  const [word, value] = rest.split(" ");
  // started PID CWD: the directory is the rest of the line, spaces and all.
  if (word === "started") return { kind: "started", cwd: rest.split(" ").slice(2).join(" ") || null };
  if (word === "exit" && value !== undefined && /^\d+$/.test(value)) return { kind: "exit", status: Number(value) };
  return { kind: "problem", what: word ?? "" };
}
