// Every `warning` event code oc-exec writes, with what it means. The Normalizer only accepts these
// (the type below), docs/events.md lists them (a test keeps the two in step), and new codes may be
// added within schema version 1: consumers treat an unknown code as a plain warning.
export const WARNING_CODES = {
  non_json_line: "opencode printed a line on stdout that is not JSON (the line, clipped, is in the message)",
  non_object_json: "opencode printed JSON on stdout that is not an event object",
  malformed_event: "an opencode event lacked a field oc-exec needs; it was skipped",
  unknown_event: "an opencode event type oc-exec does not know, or an object without a type; it was skipped",
  recovered_error:
    "opencode reported an error, then retried and answered in a later step; the turn is judged by the answer",
  line_too_long: "an opencode line exceeded the line limit and was skipped",
  stdin_timeout: "stdin is a pipe that sent nothing in time; the prompt from the arguments was used",
  agent_fallback: "opencode did not know the agent asked for and fell back to its default",
  sandbox_outside_link:
    "a sandboxed turn left symbolic links in the workspace that lead out of it; oc-exec removed them, since a later step that follows links would read what the sandbox hid",
  sandbox_special_file:
    "a sandboxed turn left named pipes or sockets in the workspace; oc-exec removed them, since a later step that reads every file would wait on one for ever",
  mcp_unavailable: "an MCP server (--mcp, or opencode's configuration) did not start; the turn ran without its tools",
  untested_opencode: "the opencode release is not one oc-exec was tested with",
  unknown_permission: "an --allow/--deny key oc-exec does not know; it was passed to opencode as given",
  api_retry:
    "opencode retried a failed model call (rate limit, server error, no connection); the cause and the wait are in the message",
  rehearsal:
    "the turn is a rehearsal (--rehearse): the scripted model, a throwaway HOME; nothing in it is a real answer",
  budget_warning: "a budget (--max-steps, --max-tokens, --max-cost-usd) is 80% used",
  export_failed: "`opencode export` after the turn failed; model and cost may be missing",
  delete_failed: "`opencode session delete` for --ephemeral failed; the session remains",
  output_last_message_failed: "the final message could not be written to --output-last-message",
  output_patch_failed: "the workspace's changes could not be written to --output-patch; no patch file was written",
  question_rejected:
    "on a server (--attach), the agent asked the user a question; a headless turn has nobody to answer, so oc-exec rejected it",
  unavailable_tool:
    "the model called a tool the agent does not offer (opencode's `invalid` tool), and no rule of oc-exec's policy removed it: not a denial; the turn is judged by how it ends",
  retry_skipped:
    "an attempt failed transiently, but another would not fit in what is left of --timeout: the turn ends with that attempt's class",
  warm_cold:
    "--warm (OC_EXEC_WARM) was asked for, but this turn cannot run on a server (the reason is in the message): it ran cold, with `opencode run`",
  sandbox_refused:
    "the sandbox refused a connection to a host that is not allowed (the host:port is in the message); a raw connection that bypasses the proxy is refused by the network namespace and cannot be named",
  sandbox_read_only_links:
    "files of the workspace with other hard links are kept read-only in the sandbox (writing one would change its other names, which may lie outside); the paths are in the message",
  sandbox_opencode_config:
    "a sandboxed turn created or changed opencode's configuration in the workspace (opencode.json(c), .opencode/); the next opencode started there reads it, outside any sandbox too; the paths are in the message",
  sandbox_agent_files:
    "a sandboxed turn created, changed or removed files coding agents load on their own (instruction files such as AGENTS.md or CLAUDE.md, other agents' configuration such as .claude/settings.json hooks or .mcp.json; opencode's own configuration is sandbox_opencode_config's); the next agent started there follows them, outside any sandbox; the paths are in the message",
  sandbox_hidden_changes:
    "a sandboxed turn created or changed files git does not list (under a path a .gitignore names, such as node_modules or .venv, or one the turn named in a .gitignore it wrote), or put in place a directory of older files there (a path ending in /), so workspace_changes does not show them; the job's later steps run what is there outside any sandbox; the first paths are in the message, all of them counted in result.sandbox.hidden_changes",
} as const;

export type WarningCode = keyof typeof WARNING_CODES;
