// `oc-exec --version`: both versions, cheaply. The bundled opencode's version comes from its
// package.json; another binary's from the cached `opencode --version`.
import { locateOpencode } from "../opencode/locate.js";
import { detectVersion } from "../opencode/version.js";
import { writeStdoutText } from "../output/stdout-writer.js";
import { VERSION } from "../version.js";

export async function printVersions(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const located = locateOpencode(env.OC_EXEC_OPENCODE ?? null, env.PATH);
  const opencode = located.ok ? `${(await detectVersion(located.binary, env)) ?? "unknown version"} (${located.binary.path})` : "not found";
  writeStdoutText(`oc-exec ${VERSION}\nopencode ${opencode}\n`);
  return 0;
}
