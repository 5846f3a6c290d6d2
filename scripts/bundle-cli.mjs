// Build step: bundles the CLI (dist/cli/entry.js and everything it imports, execa and commander
// included) into dist/bin/, and `--version` (dist/cli/versions.js) into dist/bin/versions.cjs.
// Loading ~200 small ES modules cost a turn ~170 ms of start-up on the 2-core CI machines; a
// bundle loads in a few files. What only some commands need (zod for
// `schema`/`replay`, ora for the spinner, doctor) stays in lazily loaded chunks.
// The library (dist/index.js) is not bundled: its users' bundlers do that.
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));
rmSync(`${dist}bin`, { recursive: true, force: true });
await build({
  entryPoints: [`${dist}cli/entry.js`],
  outdir: `${dist}bin`,
  entryNames: "[name]",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20.5",
  // commander and a few of execa's helpers are CommonJS; in an ES module bundle their
  // `require("node:events")` calls need a real require.
  // The sandbox library finds its vendored helpers (seccomp filters) next to its own files.
  external: ["@anthropic-ai/sandbox-runtime"],
  banner: {
    js: 'import { createRequire as __ocExecRequire } from "node:module"; const require = __ocExecRequire(import.meta.url);',
  },
  logLevel: "warning",
});
// `--version` loads this one file from the CommonJS launcher, without Node's ES module loader.
await build({
  entryPoints: [`${dist}cli/versions.js`],
  outfile: `${dist}bin/versions.cjs`,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20.5",
  // import.meta.url does not exist in CommonJS; the file's own URL is what the code means by it.
  define: { "import.meta.url": "__ocExecModuleUrl" },
  // Only a binary of unknown version is asked anything; execa then loads by a dynamic import().
  external: ["execa"],
  banner: { js: 'const __ocExecModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: "warning",
});
