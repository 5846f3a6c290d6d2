// The import graph of src/, read from the source (type-only imports included): every import runs
// down the layers (LAYERS below), no cycle between files, and no two folders that import each other.
// docs/architecture.md describes the layout this locks.
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

/**
 * The layers, highest first: a file imports only files of its own layer or a lower one. One
 * direction from the CLI down to the kernel; what decides where a turn runs (hosts) sits above the
 * engine that runs it, so the engine imports no host.
 */
const LAYERS = [
  ["index.ts"], // the library's entry
  ["cli"], // commander, io, the commands: flags -> plan -> app -> deliver
  ["app"], // use cases shared by the CLI and the library: a turn, a conversation, a batch, a rehearsal
  ["hosts"], // every place a turn runs, behind the engine's port, and the one root that picks one
  ["engine"], // turns, attempts, verify rounds, the many-turn runner, replay, the workspace snapshot, the port
  ["plan"], // options resolved once
  ["domain"], // opencode, outcome, events, progress, reports, telemetry, output, the scripted model
  ["sys"], // processes, process trees, pids, own temp dirs, the orphan guard, the safe writer
  ["kernel", "contract"], // the stdout contract, durations, environment, XDG, state dir, package root, problems
];

const top = (file: string) => (file.includes("/") ? file.slice(0, file.indexOf("/")) : file);
const layerOf = (file: string) => LAYERS.findIndex((names) => names.includes(top(file)));

/** The folder a file counts in for "no two folders import each other": a layer's subfolder, or the layer. */
const unitOf = (file: string) => {
  const parts = file.split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts.length === 2 ? parts[0]! : "(root)";
};

describe("the layers of src/", () => {
  const edges = graph();

  it("every import names a file that exists", () => {
    for (const [file, targets] of edges)
      for (const target of targets) expect(edges.has(target), `${file} imports ${target}`).toBe(true);
  });

  it("every file lies in a layer", () => {
    for (const file of edges.keys()) expect(layerOf(file), file).toBeGreaterThanOrEqual(0);
  });

  it("no import runs up the layers", () => {
    const up: string[] = [];
    for (const [file, targets] of edges)
      for (const target of targets) if (layerOf(target) < layerOf(file)) up.push(`${file} -> ${target}`);
    expect(up).toEqual([]);
  });

  it("no cycle between files, type-only imports included", () => {
    expect(cycles(edges)).toEqual([]);
  });

  it("no two folders import each other", () => {
    const folders = new Map<string, Set<string>>();
    for (const [file, targets] of edges)
      for (const target of targets) {
        const [a, b] = [unitOf(file), unitOf(target)];
        if (a !== b) folders.set(a, (folders.get(a) ?? new Set()).add(b));
      }
    const mutual = [...folders].flatMap(([a, bs]) =>
      [...bs].filter((b) => a < b && folders.get(b)?.has(a)).map((b) => `${a} ${b}`),
    );
    expect(mutual).toEqual([]);
  });

  it("hosts reach the engine only through its port", () => {
    for (const [file, targets] of edges)
      if (top(file) === "hosts")
        for (const target of targets)
          if (top(target) === "engine") expect(target, `${file} imports ${target}`).toBe("engine/backend.ts");
  });

  it("the checker sees an arrow against the layers and a cycle", () => {
    const planted = new Map(edges);
    planted.set("plan/options.ts", new Set([...(edges.get("plan/options.ts") ?? []), "hosts/make-backend.ts"]));
    planted.set("kernel/problem.ts", new Set(["kernel/duration.ts"]));
    planted.set("kernel/duration.ts", new Set(["kernel/problem.ts"]));
    const up = [...planted].flatMap(([f, ts]) => [...ts].filter((t) => layerOf(t) < layerOf(f)));
    expect(up).toEqual(["hosts/make-backend.ts"]);
    expect(cycles(planted)).toContainEqual(["kernel/duration.ts", "kernel/problem.ts"]);
  });
});
