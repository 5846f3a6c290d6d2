// The lines two texts share and where they differ (Myers' O(ND) algorithm), for the hunks of
// --output-patch. A pair of texts too far apart (more than `maxEdits` lines to change after the
// common start and end are set aside) is given as "all of the middle removed, all of it added":
// still a correct patch, only a less readable one, and no quadratic memory for a rewritten file.

export type LineOp = { op: "=" | "-" | "+"; line: string };

const MAX_EDITS = 4000;

export function diffLines(a: string[], b: string[], maxEdits = MAX_EDITS): LineOp[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const same = (from: number, to: number): LineOp[] => a.slice(from, to).map((line) => ({ op: "=", line }));
  const middle = myers(a.slice(start, endA), b.slice(start, endB), maxEdits) ?? [
    ...a.slice(start, endA).map((line): LineOp => ({ op: "-", line })),
    ...b.slice(start, endB).map((line): LineOp => ({ op: "+", line })),
  ];
  return [...same(0, start), ...middle, ...same(endA, a.length)];
}

/** The shortest edit script, or null beyond maxEdits. */
function myers(a: string[], b: string[], maxEdits: number): LineOp[] | null {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  if (max === 0) return [];
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] holds v on the diagonals -(d+1)..d+1 as it was when step d began.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(max, maxEdits); d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b);
    }
  }
  return null;
}

function backtrack(trace: Int32Array[], a: string[], b: string[]): LineOp[] {
  const ops: LineOp[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const row = trace[d]!;
    const at = (k: number) => row[k + d + 1]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ op: "=", line: a[x - 1]! });
      x--;
      y--;
    }
    if (d > 0) {
      if (x === prevX) ops.push({ op: "+", line: b[y - 1]! });
      else ops.push({ op: "-", line: a[x - 1]! });
    }
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}
