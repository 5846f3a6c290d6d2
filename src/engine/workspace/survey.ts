// What a sandboxed turn's checks need from the workspace, gathered in one walk of it (tree-walk.ts)
// before the turn and one after: its links, named pipes and sockets (outside-links.ts), the files
// agents load on their own (agent-files.ts) and, after, what changed where git does not look
// (hidden-changes.ts). A walk costs about 2.5 µs an entry; before this, the
// checks walked the tree twice before a turn and three times after it.
import { type AgentFiles, agentFileCollector } from "./agent-files.js";
import { changedSinceCollector, type DirInodes, dirInodeCollector, type MovedIn } from "./hidden-changes.js";
import { type Links, linkCollector } from "./outside-links.js";
import { walkWorkspace } from "./tree-walk.js";

export type WorkspaceSurvey = {
  links: Links;
  agentFiles: AgentFiles;
  /** Before the turn: every directory's inode. */
  dirs: DirInodes;
  /** After the turn: the entries changed since it began, and the older ones under a directory it put in place. */
  changed: string[];
  movedIn: MovedIn[];
};

/**
 * The workspace's links and agent files, read from the file system whatever git ignores.
 * `mountPoints`: where a sandbox leaves empty files of its own (plan/sandbox-spec.ts).
 */
export function surveyWorkspace(
  root: string,
  mountPoints: readonly string[],
  before?: { since: number; dirs: DirInodes },
): WorkspaceSurvey {
  const links = linkCollector();
  const agentFiles = agentFileCollector(mountPoints);
  // Before the turn: the directories' inodes, an lstat a directory. After it: what changed since it
  // began and what was moved in (hidden-changes.ts), an lstat an entry.
  const dirs = before ? null : dirInodeCollector();
  const changed = before ? changedSinceCollector(before.since, mountPoints, before.dirs) : null;
  walkWorkspace(root, (path, entry) => {
    links.visit(root, path, entry);
    if (!entry.isDirectory()) agentFiles.visit(root, path);
    dirs?.visit(root, path, entry);
    changed?.visit(root, path, entry);
  });
  return {
    links: links.found,
    agentFiles: agentFiles.found,
    dirs: dirs?.found ?? new Map(),
    changed: changed?.found ?? [],
    movedIn: changed?.movedIn ?? [],
  };
}
