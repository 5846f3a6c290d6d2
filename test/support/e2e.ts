// One scripted model server and one throwaway HOME per test file, torn down afterwards.
import { mkdirSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { type HermeticHome, makeHermeticHome } from "../../src/domain/scripted/hermetic-home.js";
import { type ModelServer, startModelServer } from "../../src/domain/scripted/model-server.js";
import { type CliOptions, runCli, runCliRaw } from "./run-cli.js";
import { testReply } from "./test-scripts.js";

export type E2E = {
  server: ModelServer;
  home: HermeticHome;
  /** A fresh empty workspace directory inside the throwaway HOME. */
  workspace(): string;
  run(args: string[], options?: Partial<CliOptions> & { extraEnv?: Record<string, string> }): ReturnType<typeof runCli>;
  runRaw(
    args: string[],
    options?: Partial<CliOptions> & { extraEnv?: Record<string, string> },
  ): ReturnType<typeof runCliRaw>;
  /** The requests the model server got whose first user message contains `marker`. */
  requestsFor(marker: string): ModelServer["requests"];
  /**
   * The environment for a test's own direct call of opencode (not through oc-exec): the HOME's, with
   * a TMPDIR inside it, since opencode leaves a native library in TMPDIR at every start.
   */
  opencodeEnv(): Record<string, string>;
};

export function useE2E(): E2E {
  const ctx = {} as E2E;
  beforeAll(async () => {
    ctx.server = await startModelServer(testReply);
    ctx.home = makeHermeticHome(ctx.server.url);
  });
  afterAll(async () => {
    await ctx.server?.close();
    ctx.home?.cleanup();
  });
  const opts = (options: Partial<CliOptions> & { extraEnv?: Record<string, string> } = {}): CliOptions => ({
    ...options,
    env: { ...ctx.home.env, ...options.extraEnv, ...options.env },
    cwd: options.cwd ?? ctx.home.workspace,
  });
  ctx.workspace = () => mkdtempSync(join(ctx.home.root, "ws-"));
  ctx.run = (args, options) => runCli(args, opts(options));
  ctx.runRaw = (args, options) => runCliRaw(args, opts(options));
  ctx.requestsFor = (marker) => ctx.server.requests.filter((r) => r.userText.includes(marker));
  ctx.opencodeEnv = () => {
    const tmp = join(ctx.home.root, "opencode-tmp");
    mkdirSync(tmp, { recursive: true });
    return { ...ctx.home.env, TMPDIR: tmp };
  };
  return ctx;
}
