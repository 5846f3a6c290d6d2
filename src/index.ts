// Public API: run turns programmatically and consume typed events. ESM only.
export { OcExec, Session } from "./turn/client.js";
export { runTurn, type Turn } from "./turn/run-turn.js";
export type { ClientOptions, SessionOptions, TurnOptions, RunTurnOptions } from "./turn/options.js";
export {
  EventSchema,
  ResultSchema,
  SCHEMA_VERSION,
  type OcEvent,
  type EventOf,
  type EventType,
  type ResultEvent,
  type Usage,
  type FileChange,
  type PermissionDenial,
  type ErrorDetail,
} from "./contract/schema.js";
export { EXIT_CODES, CLASS_PRECEDENCE, type OutcomeClass } from "./contract/exit-codes.js";
export type { StopReason, TimeoutKind, BudgetLimit } from "./outcome/classify.js";
export { VERSION } from "./version.js";
