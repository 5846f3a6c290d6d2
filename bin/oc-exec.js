#!/usr/bin/env node
// Tiny on purpose, and CommonJS (bin/package.json): Node starts an ES module entry ~14 ms slower,
// which `--help` and `--version` would pay on every call. `--help` is pre-rendered text,
// `--version` a small CommonJS bundle; a turn runs the ES module bundle of the CLI
// (scripts/bundle-cli.mjs). The exit status is set once, after stdout has drained; never
// process.exit().
"use strict";
const { join } = require("node:path");

const argv = process.argv.slice(2);
const dist = join(__dirname, "..", "dist");
const setExit = (code) => {
  process.exitCode = code;
};
// Only reached when dist/ itself cannot be loaded (a missing or broken build): everything past
// loading is caught inside and still ends in a result line. 70 is EXIT_CODES.internal_error
// (src/contract/exit-codes.ts), written out because that table lives in the build that failed.
const internalError = (error) => {
  process.stderr.write(`oc-exec: internal error: ${error?.stack ? error.stack : String(error)}\n`);
  process.exitCode = 70;
};

if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h") && !process.stdout.isTTY) {
  // Pre-rendered at build time (scripts/render-help.mjs): no commander to load.
  process.stdout.write(require("node:fs").readFileSync(join(dist, "cli", "help.txt"), "utf8"));
} else if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  Promise.resolve()
    .then(() => require(join(dist, "bin", "versions.cjs")).printVersions())
    .then(setExit, internalError);
} else {
  import("../dist/bin/entry.js").then(({ runMain }) => runMain()).then(setExit, internalError);
}
