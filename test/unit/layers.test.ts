// The import graph of src/, read from the source (type-only imports included): no cycle between
// files, and no pair of folders that import each other beyond the ones the house's second pass
// (issue 38) still has to untie. A new cycle or a new mutual pair fails here; a pair that is gone
// must leave the list, so it only shrinks.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src", import.meta.url));
const IMPORT = /(?:import|export)\s[^'"]*?from\s+["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g;

function graph(): Map<string, Set<string>> {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
  const edges = new Map<string, Set<string>>();
  for (const file of files) {
    const text = readFileSync(join(SRC, file), "utf8");
    const targets = new Set<string>();
    for (const m of text.matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      targets.add(normalize(join(dirname(file), spec)).replace(/\.js$/, ".ts"));
    }
    edges.set(file, targets);
  }
  return edges;
}

/** Strongly connected components with more than one member (Tarjan). */
function cycles(edges: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

const folderOf = (file: string) => (file.includes("/") ? file.slice(0, file.indexOf("/")) : "(kernel)");

/** Folder pairs that still import each other (sorted names): issue 38's remaining knot. */
const KNOWN_MUTUAL = [
  "(kernel) api",
  "(kernel) options",
  "(kernel) outcome",
  "backend process",
  "backend sandbox",
  "backend server",
  "backend ssh",
  "backend warm",
  "opencode process",
  "options ssh",
  "process sandbox",
];

describe("the layers of src/", () => {
  const edges = graph();

  it("every import names a file that exists", () => {
    for (const [file, targets] of edges)
      for (const target of targets) expect(edges.has(target), `${file} imports ${target}`).toBe(true);
  });

  it("no cycle between files, type-only imports included", () => {
    expect(cycles(edges)).toEqual([]);
  });

  it("no new pair of folders that import each other; the known ones only shrink", () => {
    const folders = new Map<string, Set<string>>();
    for (const [file, targets] of edges)
      for (const target of targets) {
        const [a, b] = [folderOf(file), folderOf(target)];
        if (a !== b) folders.set(a, (folders.get(a) ?? new Set()).add(b));
      }
    const mutual = [...folders].flatMap(([a, bs]) =>
      [...bs].filter((b) => a < b && folders.get(b)?.has(a)).map((b) => `${a} ${b}`),
    );
    expect(mutual.sort()).toEqual(KNOWN_MUTUAL);
  });

  it("sys/ and the kernel's state files import nothing but each other", () => {
    const low = (f: string) => f.startsWith("sys/") || f === "xdg.ts" || f === "state-dir.ts";
    for (const [file, targets] of edges)
      if (low(file)) for (const target of targets) expect(low(target), `${file} imports ${target}`).toBe(true);
  });
});
