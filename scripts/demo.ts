// `npm run demo`: see oc-exec work without provider credentials. Starts the project's scripted
// model server on loopback, points a throwaway opencode HOME at it, and runs the built oc-exec
// (with the real opencode) through a turn with a tool call. The JSONL goes to stdout; progress
// to stderr, as always.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { makeHermeticHome } from "../src/domain/scripted/hermetic-home.js";
import { startModelServer } from "../src/domain/scripted/model-server.js";
import { testReply } from "../test/support/test-scripts.js";

const server = await startModelServer(testReply);
const home = makeHermeticHome(server.url);
const bin = fileURLToPath(new URL("../bin/oc-exec.js", import.meta.url));
const args = process.argv.slice(2);
const prompt = args.length > 0 ? args : ["scenario:tool Run echo hi and tell me what it printed"];
process.stderr.write(`demo: scripted model server at ${server.url}, throwaway HOME ${home.root}\n`);
const child = spawn(process.execPath, [bin, "--dir", home.workspace, ...prompt], {
  env: home.env,
  stdio: ["ignore", "inherit", "inherit"],
});
const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? 1)));
await server.close();
home.cleanup();
process.exitCode = code;
