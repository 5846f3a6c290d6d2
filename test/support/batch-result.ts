// A batch.result as oc-exec writes it, for tests of what reads one (validate, the step summary).
import type { BatchResult } from "../../src/contract/schema.js";

export const batchResultOf = (over: Partial<BatchResult> = {}): BatchResult => ({
  type: "batch.result",
  seq: 0,
  time: "2026-11-23T00:00:00.000Z",
  session_id: null,
  schema_version: "1",
  ok: false,
  exit_code: 1,
  counts: {},
  tasks: [],
  usage: { input: 0, output: 0, reasoning: 0, cache_read: 0, cache_write: 0, total: 0 },
  cost_usd: 0,
  duration_ms: 0,
  shard: null,
  problems: [],
  ...over,
});
