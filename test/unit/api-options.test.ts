// The library refuses option keys it does not take, as esbuild's API does: a typo is a
// config_error result, never an option dropped in silence (runTurn({ sanbox }) ran unsandboxed).
import { describe, expect, it } from "vitest";
import { runTurn } from "../../src/app/run-turn.js";
import type { OcEvent } from "../../src/contract/schema.js";

async function events(options: object): Promise<OcEvent[]> {
  const out: OcEvent[] = [];
  for await (const event of runTurn(options as never)) out.push(event);
  return out;
}

describe("runTurn's options", () => {
  it("an unknown key is a config_error result naming it, with the key it resembles; nothing runs", async () => {
    const run = await events({ prompt: "x", sanbox: "workspace-write", timeout: 5000, bogus: 1 });
    expect(run.map((e) => e.type)).toEqual(["run.started", "result"]);
    expect(run.at(-1)).toMatchObject({
      type: "result",
      class: "config_error",
      exit_code: 5,
      error: {
        name: "UsageError",
        message: "runTurn does not take the options sanbox (did you mean sandbox?), timeout, bogus",
      },
    });
  });
});
