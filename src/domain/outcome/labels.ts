// What the caller calls each option, for messages. A library caller reads `timeoutMs`, a CLI user
// `--timeout`: the CLI passes its flag names (cli/flags.ts), and no library message speaks in flags.
export type OptionName =
  | "dir"
  | "files"
  | "allow"
  | "deny"
  | "config"
  | "outputSchema"
  | "outputLastMessage"
  | "outputPatch"
  | "timeoutMs"
  | "startupTimeoutMs"
  | "idleTimeoutMs"
  | "killAfterMs"
  | "maxSteps"
  | "maxTokens"
  | "maxCostUsd"
  | "maxOutputBytes"
  | "failOn"
  | "attach"
  | "textDeltas"
  | "pure"
  | "auto"
  | "model"
  | "sandbox"
  | "writable"
  | "readable"
  | "allowHosts"
  | "passEnv"
  | "ssh"
  | "warm"
  | "sshOptions"
  | "verify"
  | "verifyTimeoutMs"
  | "verifyAttempts"
  | "retry"
  | "retryDelayMs"
  | "retryMaxDelayMs"
  | "fallbackModel"
  | "rehearse"
  | "session"
  | "continue"
  | "fork"
  | "agent"
  | "acp";

export type OptionLabels = Record<OptionName, string>;

export const API_LABELS: OptionLabels = {
  dir: "dir",
  files: "files",
  allow: "allow",
  deny: "deny",
  config: "config",
  outputSchema: "outputSchema",
  outputLastMessage: "outputLastMessage",
  outputPatch: "outputPatch",
  timeoutMs: "timeoutMs",
  startupTimeoutMs: "startupTimeoutMs",
  idleTimeoutMs: "idleTimeoutMs",
  killAfterMs: "killAfterMs",
  maxSteps: "maxSteps",
  maxTokens: "maxTokens",
  maxCostUsd: "maxCostUsd",
  maxOutputBytes: "maxOutputBytes",
  failOn: "failOn",
  attach: "attach",
  textDeltas: "textDeltas",
  pure: "pure",
  auto: "auto",
  model: "model",
  sandbox: "sandbox",
  writable: "writable",
  readable: "readable",
  allowHosts: "allowHosts",
  passEnv: "passEnv",
  ssh: "ssh",
  warm: "warm",
  sshOptions: "sshOptions",
  verify: "verify",
  verifyTimeoutMs: "verifyTimeoutMs",
  verifyAttempts: "verifyAttempts",
  retry: "retry",
  retryDelayMs: "retryDelayMs",
  retryMaxDelayMs: "retryMaxDelayMs",
  fallbackModel: "fallbackModel",
  rehearse: "rehearse",
  session: "session",
  continue: "continue",
  fork: "fork",
  agent: "agent",
  acp: "acp",
};

/** The option behind each budget, and behind each timeout. */
export const BUDGET_OPTION = { steps: "maxSteps", tokens: "maxTokens", cost_usd: "maxCostUsd" } as const;
export const TIMEOUT_OPTION = { turn: "timeoutMs", startup: "startupTimeoutMs", idle: "idleTimeoutMs" } as const;
