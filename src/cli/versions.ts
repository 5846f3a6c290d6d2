// `oc-exec --version`: both versions, cheaply. The bundled opencode's version comes from its
// package.json; another binary's from the cached `opencode --version`.

import { TESTED_RANGE } from "../domain/opencode/features.js";
import { locateOpencode } from "../domain/opencode/locate.js";
import { detectOpencode } from "../domain/opencode/version.js";
import { writeStdoutText } from "../domain/output/stdout-writer.js";
import { readEnvironment } from "../kernel/environment.js";
import { VERSION } from "../kernel/version.js";

export async function printVersions(env: NodeJS.ProcessEnv = process.env, binary?: string): Promise<number> {
  const located = locateOpencode(binary ?? readEnvironment(env).opencode, env.PATH);
  const detected = located.ok ? await detectOpencode(located.binary, env) : null;
  const tested = detected?.tested ? "tested" : `untested; oc-exec is tested with ${TESTED_RANGE}`;
  const opencode = located.ok
    ? `${detected?.version ?? "unknown version"} (${located.binary.path}, ${tested})`
    : "not found";
  writeStdoutText(`oc-exec ${VERSION}\nopencode ${opencode}\n`);
  return 0;
}
