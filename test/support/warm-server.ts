// A warm opencode server for a test file: started with `oc-exec server start` in the file's
// throwaway HOME (the real `opencode serve`, the scripted model server), stopped afterwards with
// `oc-exec server stop`, then by its pid if anything is left, and checked to be gone, tool
// processes included.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import type { ManagedServer } from "../../src/hosts/server/registry.js";
import type { E2E } from "./e2e.js";
import { descendants, isAlive, waitFor } from "./procs.js";

export type WarmServer = { url: string; record: ManagedServer };

export function readRecords(stateHome: string): ManagedServer[] {
  const dir = join(stateHome, "oc-exec", "servers");
  try {
    return readdirSync(dir)
      .filter((n) => n.endsWith(".json"))
      .map((n) => JSON.parse(readFileSync(join(dir, n), "utf8")) as ManagedServer);
  } catch {
    return [];
  }
}

/** Stops a server by its pids (supervisor, opencode and everything below) and waits until all are gone. */
export async function killServer(record: { pid: number; supervisor_pid?: number }): Promise<void> {
  const pids = [record.pid, ...(record.supervisor_pid ? [record.supervisor_pid] : [])];
  const below = descendants(record.pid).map((p) => p.pid);
  for (const pid of [...pids, ...below]) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  await waitFor(() => [...pids, ...below].every((p) => !isAlive(p)), 10_000, "the server's processes to end");
}

export function useWarmServer(e2e: E2E, args: string[] = ["--idle-timeout", "15m"]): WarmServer {
  const ctx = {} as WarmServer;
  let toolPids: number[] = [];
  beforeAll(async () => {
    const started = await e2e.runRaw(["server", "start", ...args]);
    if (started.code !== 0) throw new Error(`server start failed (${started.code}): ${started.stderr}`);
    ctx.url = started.stdout.trim();
    const record = readRecords(e2e.home.env.XDG_STATE_HOME!).find((r) => r.url === ctx.url);
    if (!record) throw new Error(`no record for ${ctx.url}`);
    ctx.record = record;
  }, 90_000);
  afterAll(async () => {
    if (!ctx.record) return;
    toolPids = descendants(ctx.record.pid).map((p) => p.pid);
    const stopped = await e2e.runRaw(["server", "stop", ctx.url]);
    // Whatever stop did, nothing of the server may outlive the file.
    await killServer(ctx.record);
    expect(stopped.code).toBe(0);
    expect(toolPids.filter(isAlive)).toEqual([]);
    expect(readRecords(e2e.home.env.XDG_STATE_HOME!)).toEqual([]);
  }, 60_000);
  return ctx;
}
