// `oc-exec scripted-model`: the scripted OpenAI-compatible model on loopback, for a user's own
// pipeline tests. stdout: one JSON line ({url, model, opencode_config}); it then serves until
// SIGINT or SIGTERM, and exits 0.
import { EXIT_CODES } from "../contract/exit-codes.js";
import { writeStdoutText } from "../domain/output/stdout-writer.js";
import { startScriptedModel } from "../domain/scripted/public.js";
import type { CliIo } from "./io.js";
import { onStopSignals } from "./signals.js";

export async function scriptedModelCommand(io: Pick<CliIo, "stdout" | "stderr">): Promise<number> {
  const model = await startScriptedModel();
  writeStdoutText(
    `${JSON.stringify({ url: model.url, model: model.model, opencode_config: JSON.parse(model.opencodeConfig) })}\n`,
    io.stdout,
  );
  io.stderr.write(
    `oc-exec scripted-model: serving at ${model.url} (pid ${process.pid}); put "scenario:NAME" in a prompt to choose what it plays; stop it with Ctrl-C or kill ${process.pid}\n`,
  );
  await new Promise<void>((resolve) => {
    const dispose = onStopSignals(() => {
      dispose();
      resolve();
    });
  });
  await model.close();
  io.stderr.write(`oc-exec scripted-model: stopped after ${model.requests().length} request(s)\n`);
  return EXIT_CODES.success;
}
