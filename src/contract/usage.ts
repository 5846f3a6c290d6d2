// Token usage as the events carry it: the zero to start from, and the one way to add a step's,
// a turn's or a shard's usage to a running total (batches, conversations, merge).
import type { Usage } from "./schema.js";

export const emptyUsage = (): Usage => ({
  input: 0,
  output: 0,
  reasoning: 0,
  cache_read: 0,
  cache_write: 0,
  total: 0,
});

/** Adds `more` into `total`, field by field. */
export function addUsage(total: Usage, more: Usage): void {
  for (const key of Object.keys(total) as (keyof Usage)[]) total[key] += more[key];
}
