// Public API: run turns programmatically and consume typed events. ESM only.
export { OcExec, Session } from "./api/client.js";
export { runTurn, type Turn } from "./api/run-turn.js";
export { CLASS_PRECEDENCE, EXIT_CODES, type OutcomeClass } from "./contract/exit-codes.js";
export {
  type ErrorDetail,
  type EventOf,
  EventSchema,
  type EventType,
  type FileChange,
  type OcEvent,
  type PermissionDenial,
  type ResultEvent,
  ResultSchema,
  SCHEMA_VERSION,
  type Usage,
} from "./contract/schema.js";
export type { ClientOptions, RunTurnOptions, SessionOptions, TurnOptions } from "./options/options.js";
export type { BudgetLimit, StopReason, TimeoutKind } from "./outcome/classify.js";
export type { FailOn } from "./outcome/fail-on.js";
export { type ScriptedModel, startScriptedModel } from "./scripted/public.js";
export type { RehearsalName } from "./scripted/rehearsals.js";
export { VERSION } from "./version.js";
