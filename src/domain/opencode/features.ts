// What an opencode release accepts, so one oc-exec drives old and new releases alike. Tested
// releases are listed; any other release is asked once (`opencode run --help`, cached with its
// version) and its flags are read from the help text.
export type Features = {
  /** --dir; without it the workspace is only the child's working directory. */
  dir: boolean;
  variant: boolean;
  thinking: boolean;
  pure: boolean;
  fork: boolean;
  title: boolean;
  printLogs: boolean;
  /** The flag that auto-approves permissions, if any. */
  autoFlag: "--auto" | "--dangerously-skip-permissions" | null;
  /**
   * --standalone (2.x): the turn runs on a private server of its own, a child of `run` with its
   * environment. Without it, 2.x sends every `run` turn to a shared per-user background service:
   * outside any sandbox, without the caller's environment.
   */
  standalone: boolean;
};

export const ALL_FEATURES: Features = {
  dir: true,
  variant: true,
  thinking: true,
  pure: true,
  fork: true,
  title: true,
  printLogs: true,
  autoFlag: "--auto",
  standalone: false,
};

/** The releases oc-exec's fixtures and compatibility matrix cover. */
export const TESTED_VERSIONS = ["1.0.185", "1.14.41", "1.18.33"] as const;
export const TESTED_RANGE = `${TESTED_VERSIONS[0]} to ${TESTED_VERSIONS[TESTED_VERSIONS.length - 1]}`;

const KNOWN: Record<string, Features> = {
  "1.18.33": ALL_FEATURES,
  "1.14.41": { ...ALL_FEATURES, autoFlag: "--dangerously-skip-permissions" },
  "1.0.185": {
    dir: false,
    variant: false,
    thinking: false,
    pure: false,
    fork: false,
    title: true,
    printLogs: true,
    autoFlag: null,
    standalone: false,
  },
};

/**
 * opencode 2.x's `run` as its source has it (packages/cli/src/run/run.ts in opencode's repository):
 * no --dir (the workspace is $PWD, else the working directory), no --variant flag, no --pure, no
 * --print-logs; --auto, --fork, --title and --thinking remain. Used when `run --help` cannot be read,
 * so --standalone is not assumed: a 2.x release whose help does not show it never gets a turn.
 */
export const V2_FEATURES: Features = {
  dir: false,
  variant: false,
  thinking: true,
  pure: false,
  fork: true,
  title: true,
  printLogs: false,
  autoFlag: "--auto",
  standalone: false,
};

/** The major version, or null. 2.x is handled from its source and shaped fixtures, not a recording. */
export function majorOf(version: string | null): number | null {
  const m = version ? /^(\d+)\./.exec(version) : null;
  return m ? Number(m[1]) : null;
}

export function knownFeatures(version: string | null): Features | null {
  return version ? (KNOWN[version] ?? null) : null;
}

/** Reads the flags out of `opencode run --help` (yargs layout: `  --name  description`). */
export function parseRunHelp(help: string): Features {
  const has = (flag: string) => new RegExp(`(^|\\s)${flag.replace(/-/g, "\\-")}(\\s|,|$)`, "m").test(help);
  return {
    dir: has("--dir"),
    variant: has("--variant"),
    thinking: has("--thinking"),
    pure: has("--pure"),
    fork: has("--fork"),
    title: has("--title"),
    printLogs: has("--print-logs"),
    autoFlag: has("--auto")
      ? "--auto"
      : has("--dangerously-skip-permissions")
        ? "--dangerously-skip-permissions"
        : null,
    standalone: has("--standalone"),
  };
}

/**
 * Why a turn must not run through this opencode's `run`: a 2.x release without --standalone would
 * send it to the shared background service (outside any sandbox, without this environment), so
 * oc-exec never runs one there. Null when `run` keeps the turn to itself.
 */
export function sharedServiceProblem(version: string | null, features: Features, where = ""): string | null {
  if ((majorOf(version) ?? 0) < 2 || features.standalone) return null;
  return `opencode ${version}${where} has no \`run --standalone\`: its \`run\` would send the turn to opencode's shared background service (outside any sandbox, without this environment), so oc-exec does not run it; run it through ACP instead (--acp opencode)`;
}
