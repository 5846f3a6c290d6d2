// A denied tool call and opencode's "permission requested ... auto-rejecting" notice arrive on
// different pipes (stdout and stderr), in either order; each waits here for its partner. Pure: a
// pair in, a denial out (with whatever the notice named), or null while one side still waits.
import type { PermissionDenial } from "../../contract/schema.js";

type Notice = { permission: string | null; pattern: string | null; patterns?: string[] };

export class PermissionPairing {
  private readonly notices: Notice[] = [];
  private readonly tools: { tool: string; callId: string | null }[] = [];

  /** A tool call opencode refused; the denial once its notice is known. */
  deniedTool(tool: string, callId: string | null): PermissionDenial | null {
    const notice = this.notices.shift();
    if (notice) return { ...notice, tool, call_id: callId };
    this.tools.push({ tool, callId });
    return null;
  }

  /** opencode's notice of a permission it refused; the denial once its tool call is known. */
  notice(permission: string | null, pattern: string | null, patterns?: string[]): PermissionDenial | null {
    const notice: Notice = patterns ? { permission, pattern, patterns } : { permission, pattern };
    const tool = this.tools.shift();
    if (tool) return { ...notice, tool: tool.tool, call_id: tool.callId };
    this.notices.push(notice);
    return null;
  }

  /** Both streams ended: whatever still waits is a denial of its own, with what is known. */
  flush(): PermissionDenial[] {
    return [
      ...this.notices.splice(0).map((notice) => ({ ...notice, tool: null, call_id: null })),
      ...this.tools.splice(0).map((t) => ({ permission: null, pattern: null, tool: t.tool, call_id: t.callId })),
    ];
  }
}
