// Public API: run turns programmatically and consume typed events. ESM only.
export { OcExec, Session } from "./app/client.js";
export { runTurn, type Turn } from "./app/run-turn.js";
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
export type { BudgetLimit, StopReason, TimeoutKind } from "./domain/outcome/classify.js";
export type { FailOn } from "./domain/outcome/fail-on.js";
export { type ScriptedModel, startScriptedModel } from "./domain/scripted/public.js";
export type { RehearsalName } from "./domain/scripted/rehearsals.js";
export { VERSION } from "./kernel/version.js";
export type { ClientOptions, RunTurnOptions, SessionOptions, TurnOptions } from "./plan/options.js";
