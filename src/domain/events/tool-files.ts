// Derives file.changed events from the file-writing tools. opencode reports no file list of its
// own in --format json, so the tool input (and metadata where a release has it) is the evidence.
import { isAbsolute, relative, resolve } from "node:path";
import type { FileChange } from "../../contract/schema.js";
import { isObject, type Json, readBoolean, readObject, readString } from "./upstream.js";

function workspacePath(workspace: string, path: string): string {
  const abs = isAbsolute(path) ? path : resolve(workspace, path);
  const rel = relative(workspace, abs);
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? abs : rel;
}

/** Paths named by an apply_patch style patch: "*** Add File: x", "*** Update File: y", ... */
function patchChanges(workspace: string, patch: string): FileChange[] {
  const out: FileChange[] = [];
  const re = /^\*\*\* (Add|Update|Delete) File: (.+)$/gm;
  for (let m = re.exec(patch); m; m = re.exec(patch)) {
    const change = m[1] === "Add" ? "added" : m[1] === "Delete" ? "deleted" : "modified";
    out.push({ path: workspacePath(workspace, m[2]!.trim()), change });
  }
  return out;
}

export function fileChangesOf(workspace: string, tool: string, input: unknown, metadata: Json | null): FileChange[] {
  const name = tool.toLowerCase();
  // metadata.filepath is the resolved path opencode wrote; the input may be relative.
  const filePath =
    readString(metadata, "filepath") ??
    readString(input, "filePath") ??
    readString(input, "file_path") ??
    readString(input, "path");
  if (name === "write") {
    if (!filePath) return [];
    // opencode's write metadata says whether the file existed before; without it, assume it did.
    const added = readBoolean(metadata, "exists") === false;
    return [{ path: workspacePath(workspace, filePath), change: added ? "added" : "modified" }];
  }
  if (name === "edit" || name === "multiedit") {
    // codex-acp's edit names each file it changes and how: {changes: {PATH: {type: add | update | delete}}}.
    const changes = readObject(input, "changes");
    if (changes)
      return Object.entries(changes).map(([path, change]) => {
        const type = readString(change, "type");
        return {
          path: workspacePath(workspace, path),
          change: type === "add" ? "added" : type === "delete" ? "deleted" : "modified",
        };
      });
    // Copilot CLI's create ({path, file_text}) makes a file that must not exist yet.
    const created = readString(input, "file_text") !== null;
    return filePath ? [{ path: workspacePath(workspace, filePath), change: created ? "added" : "modified" }] : [];
  }
  if (name === "patch" || name === "apply_patch") {
    const text = readString(input, "patchText") ?? readString(input, "patch") ?? readString(input, "input");
    if (text) return patchChanges(workspace, text);
    const files = readObject(metadata, "files");
    return isObject(files)
      ? Object.keys(files).map((p) => ({ path: workspacePath(workspace, p), change: "modified" as const }))
      : [];
  }
  return [];
}
