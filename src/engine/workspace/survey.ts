// What a sandboxed turn's checks need from the workspace, gathered in one walk of it (tree-walk.ts)
// before the turn and one after: its links, named pipes and sockets (outside-links.ts), the files
// agents load on their own (agent-files.ts) and, after, what changed where git does not look
// (hidden-changes.ts). A walk costs about 2.5 µs an entry; before this, the
// checks walked the tree twice before a turn and three times after it.
import { type AgentFiles, agentFileCollector } from "./agent-files.js";
import { changedSinceCollector } from "./hidden-changes.js";
import { type Links, linkCollector } from "./outside-links.js";
import { walkWorkspace } from "./tree-walk.js";

export type WorkspaceSurvey = { links: Links; agentFiles: AgentFiles; changed: string[] };

/**
 * The workspace's links and agent files, read from the file system whatever git ignores.
 * `mountPoints`: where a sandbox leaves empty files of its own (plan/sandbox-spec.ts).
 */
export function surveyWorkspace(root: string, mountPoints: readonly string[], since?: number): WorkspaceSurvey {
  const links = linkCollector();
  const agentFiles = agentFileCollector(mountPoints);
  // After the turn: what changed since it began (hidden-changes.ts), an lstat an entry more.
  const changed = since === undefined ? null : changedSinceCollector(since, mountPoints);
  walkWorkspace(root, (path, entry) => {
    links.visit(root, path, entry);
    if (!entry.isDirectory()) agentFiles.visit(root, path);
    changed?.visit(root, path, entry);
  });
  return { links: links.found, agentFiles: agentFiles.found, changed: changed?.found ?? [] };
}
