// `oc-exec --version`: both versions, cheaply. The bundled opencode's version comes from its
// package.json; another binary's from the cached `opencode --version`.

import { ensureOpencode } from "../domain/opencode/ensure.js";
import { TESTED_RANGE } from "../domain/opencode/features.js";
import { writeStdoutText } from "../domain/output/stdout-writer.js";
import { VERSION } from "../kernel/version.js";

export async function printVersions(env: NodeJS.ProcessEnv = process.env, binary?: string): Promise<number> {
  const found = await ensureOpencode(binary, env);
  const opencode =
    "problem" in found
      ? "not found"
      : `${found.detected.version ?? "unknown version"} (${found.binary.path}, ${found.detected.tested ? "tested" : `untested; oc-exec is tested with ${TESTED_RANGE}`})`;
  writeStdoutText(`oc-exec ${VERSION}\nopencode ${opencode}\n`);
  return 0;
}
