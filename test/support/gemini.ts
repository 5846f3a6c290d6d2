// gemini-cli (the project's pinned dev dependency) against the scripted Gemini API server, for
// `--acp gemini`: a throwaway HOME whose settings turn off telemetry, usage statistics and update
// checks, GOOGLE_GEMINI_BASE_URL on loopback, one fixed model (no model routing).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { startGeminiServer } from "../../src/domain/scripted/gemini-server.js";
import type { ModelServer } from "../../src/domain/scripted/model-server.js";
import { testReply } from "./test-scripts.js";

export type Gemini = { server: ModelServer; env: Record<string, string> };

export function useGemini(): Gemini {
  const ctx = { env: {} } as Gemini & { home: string };
  beforeAll(async () => {
    ctx.server = await startGeminiServer(testReply);
    ctx.home = mkdtempSync(join(tmpdir(), "oc-exec-gemini-"));
    mkdirSync(join(ctx.home, ".gemini"));
    writeFileSync(
      join(ctx.home, ".gemini", "settings.json"),
      JSON.stringify({
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
      }),
    );
    ctx.env = {
      HOME: ctx.home,
      PATH: `${resolve("node_modules/.bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      GEMINI_API_KEY: "test-gemini-key",
      GOOGLE_GEMINI_BASE_URL: ctx.server.url,
      GEMINI_MODEL: "gemini-2.5-flash",
      GEMINI_TELEMETRY_ENABLED: "false",
    };
  });
  afterAll(async () => {
    await ctx.server?.close();
    if (ctx.home) rmSync(ctx.home, { recursive: true, force: true });
  });
  return ctx;
}
