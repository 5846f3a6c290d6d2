// Every shell example in the README and docs/ runs as written under GitHub Actions' two shells:
// `bash -e` (a step with no `shell:`) and `bash -eo pipefail` (`shell: bash`). Each block carries a
// marker: `<!-- example: NAME -->` (run here, or elsewhere for the five that need a real server or a
// provider's shape: warm-server, batch, conversation, exit-codes in readme-examples.test.ts,
// sandbox-server in sandbox-server.test.ts) or `<!-- set-up -->` (the
// project's own set-up, run by CI itself). Every oc-exec call of a block becomes a rehearsal
// (OC_EXEC_REHEARSE=success: the real opencode against the scripted model), in a git work tree
// holding the files the examples name.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sandboxUnavailable } from "../../src/hosts/sandbox/sandbox.js";
import { useE2E } from "../support/e2e.js";
import { BIN } from "../support/run-cli.js";

const e2e = useE2E();
const root = new URL("../../", import.meta.url).pathname;
const files = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

type Block = { file: string; marker: string | null; script: string };

function blocks(): Block[] {
  const found: Block[] = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    for (const m of text.matchAll(/(?:<!-- ([^>]*?) -->\n)?(````?)sh\n([\s\S]*?)\n\2\n/g))
      found.push({ file, marker: m[1] ?? null, script: m[3]! });
  }
  return found;
}

/** Run elsewhere (readme-examples, ssh, warm, sandbox-server tests), each against the outcome it branches on. */
const ELSEWHERE = new Set([
  "warm-server",
  "warm-env",
  "batch",
  "conversation",
  "exit-codes",
  "sandbox-server",
  "ssh",
  "ssh-turn",
  "ssh-server",
]);

describe("every shell block in the README and docs/ says how it is checked", () => {
  it("each has a marker, and example names are unique", () => {
    const all = blocks();
    expect(all.length).toBeGreaterThan(15);
    expect(all.filter((b) => b.marker === null).map((b) => `${b.file}: ${b.script.split("\n")[0]}`)).toEqual([]);
    const names = all.flatMap((b) => (b.marker?.startsWith("example: ") ? [b.marker.slice(9)] : []));
    expect(new Set(names).size).toBe(names.length);
    for (const b of all) expect(b.marker).toMatch(/^(example: [a-z-]+|set-up)$/);
  });
});

const unavailable = await sandboxUnavailable(process.env);

/** A CI checkout with what the examples name: a git work tree, a task file, a diff, a schema, a step script. */
function checkout(): { cwd: string; bin: string } {
  const base = mkdtempSync(join(e2e.home.root, "docs-"));
  const cwd = join(base, "work");
  mkdirSync(join(cwd, "src"), { recursive: true });
  mkdirSync(join(base, "repo"));
  writeFileSync(join(cwd, "src", "util.ts"), "export const x = 1;\n");
  writeFileSync(join(cwd, "task.md"), "Explain src/util.ts\n");
  writeFileSync(join(cwd, "diff.patch"), "--- a/x\n+++ b/x\n");
  writeFileSync(join(cwd, "review.schema.json"), '{"type": "object"}\n');
  writeFileSync(join(cwd, "ci-opencode.json"), "{}\n");
  writeFileSync(join(cwd, "my-ci-step.sh"), '#!/bin/bash\nset -e\noc-exec "Run the step" > step.jsonl\n', {
    mode: 0o755,
  });
  spawnSync("git", ["init", "-q"], { cwd });
  const bin = join(base, "bin");
  mkdirSync(bin);
  // `oc-exec` on PATH, as after `npm install -g`.
  writeFileSync(join(bin, "oc-exec"), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, "oc-exec"), 0o755);
  return { cwd, bin };
}

function bash(flags: string[], script: string, where: { cwd: string; bin: string }) {
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn("bash", [...flags, "-c", script], {
      cwd: where.cwd,
      env: { ...e2e.home.env, PATH: `${where.bin}:${e2e.home.env.PATH}`, OC_EXEC_REHEARSE: "success" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

const runnable = blocks().filter((b) => b.marker?.startsWith("example: ") && !ELSEWHERE.has(b.marker.slice(9)));

/** A pipeline (`a | b`, or a `|` ending a line), not `||` nor a case pattern's `1|2)`. */
const PIPELINE = /(^|[^|])\|(\s|$)/m;

// `bash -eo pipefail` stops wherever `bash -e` does, and also when any command of a pipeline fails:
// every block runs under it. Under plain `bash -e` only a pipeline's status can differ (its last
// command's), so the blocks with a pipeline run under that shell too.
describe.each([
  { shell: "-eo pipefail", flags: ["-eo", "pipefail"], examples: runnable },
  { shell: "-e", flags: ["-e"], examples: runnable.filter((b) => PIPELINE.test(b.script)) },
])("the docs' examples under bash $shell", ({ flags, examples }) => {
  it.each(examples.map((b) => [b.marker!.slice(9), b] as const))(
    "%s",
    async (name, block) => {
      const sandboxed = /--sandbox|--full-auto|OC_EXEC_SANDBOX/.test(block.script);
      if (sandboxed && unavailable !== null && !process.env.CI) {
        console.warn(`*** SKIPPED: docs example ${name} (${block.file}) needs the sandbox: ${unavailable} ***`);
        return;
      }
      const run = await bash(flags, block.script, checkout());
      expect(run.stderr.split("\n").filter((l) => /^bash: /.test(l))).toEqual([]);
      expect(run.code, `${block.file} example ${name}: ${run.stderr.slice(-600)}`).toBe(0);
    },
    180_000,
  );
});

// The loop example, checked for what it is for: one turn per line of the list. Without -n, the first
// oc-exec read the rest of the list into its prompt and the loop ran once.
describe("docs/usage.md's loop: -n leaves the loop its stdin", () => {
  const block = blocks().find((b) => b.marker === "example: loop")!;

  it.each([
    ["as written (-n): every file gets its summary", block.script, ["a.ts", "b.ts", "util.ts"]],
    ["without -n: only the first, the rest read into its prompt", block.script.replace(" -n ", " "), ["a.ts"]],
  ])(
    "%s",
    async (_name, script, summarized) => {
      const where = checkout();
      writeFileSync(join(where.cwd, "src", "a.ts"), "export const a = 1;\n");
      writeFileSync(join(where.cwd, "src", "b.ts"), "export const b = 1;\n");
      const run = await bash(["-eo", "pipefail"], script, where);
      expect(run.code, run.stderr).toBe(0);
      const made = readdirSync(where.cwd).filter((f) => f.startsWith("summary-"));
      expect(made.sort()).toEqual(summarized.map((f) => `summary-${f}.jsonl`));
      for (const f of made) {
        const lines = readFileSync(join(where.cwd, f), "utf8").trim().split("\n");
        expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: "result", class: "success" });
      }
    },
    180_000,
  );
});
