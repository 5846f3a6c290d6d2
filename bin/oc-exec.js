#!/usr/bin/env node
// Tiny on purpose: --version is answered without loading the CLI; everything else runs the
// bundled entry (scripts/bundle-cli.mjs: one bundle loads much faster than ~200 modules).
// The exit status is set once, after stdout has drained; never process.exit().
const argv = process.argv.slice(2);
const help = argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h") && !process.stdout.isTTY;
if (help) {
  // Pre-rendered at build time (scripts/render-help.mjs): no commander to load.
  const { readFileSync } = await import("node:fs");
  process.stdout.write(readFileSync(new URL("../dist/cli/help.txt", import.meta.url), "utf8"));
} else if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  const { printVersions } = await import("../dist/cli/versions.js");
  process.exitCode = await printVersions();
} else {
  const { runMain } = await import("../dist/bin/entry.js");
  process.exitCode = await runMain();
}
