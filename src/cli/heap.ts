// Keeps oc-exec's memory flat however long opencode's stream runs.
//
// V8 doubles its young generation each time the bytes that survived scavenges since the last
// doubling exceed its size. On a stream that never ends, that always happens in the end: with
// Node 20's defaults the young generation climbs from 2 MB to 32 MB (Node 24: 64 MB), so a
// 200 MB stream peaked ~15 MB above a 20 MB one although nothing is retained.
//
// oc-exec's garbage is per line and short-lived. Frozen at its first 2 MB, scavenges came so
// often that a 200 MB stream cost ~28% more CPU; let grow once, to 4 MB, it costs no measurable
// CPU and the peak stays flat (test/bench, README "Performance"). V8 reads the growth factor
// each time it grows the space, so setting it at run time works (checked on Node 20, 22, 24).
// No run-time flag caps the size directly, so the size is checked after each garbage collection
// (the young generation only grows during one): nothing runs while oc-exec allocates nothing,
// as in a long turn where opencode is quiet. Only the CLI does this: it owns its process; the
// library leaves its host's heap alone.
import { PerformanceObserver } from "node:perf_hooks";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";

const YOUNG_GENERATION_MAX = 4 * 1024 * 1024;

export function capYoungGeneration(): void {
  const reached = () =>
    (getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? Infinity) >=
    YOUNG_GENERATION_MAX;
  const freeze = () => setFlagsFromString("--semi-space-growth-factor=1");
  if (reached()) return freeze();
  const observer = new PerformanceObserver(() => {
    if (!reached()) return;
    freeze();
    observer.disconnect();
  });
  observer.observe({ entryTypes: ["gc"] });
}
