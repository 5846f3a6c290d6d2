// Public API: run a turn programmatically and consume typed events.
export { runTurn, type Turn } from "./turn/run-turn.js";
export type { TurnOptions } from "./turn/options.js";
export { executeTurn } from "./turn/execute.js";
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
} from "./events/schema.js";
export { EXIT_CODES, CLASS_PRECEDENCE, type OutcomeClass } from "./outcome/exit-codes.js";
export type { StopReason } from "./outcome/classify.js";
export { VERSION } from "./version.js";
