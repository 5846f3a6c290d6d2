// Build step: renders `oc-exec --help` once into dist/cli/help.txt, so the launcher can print it
// without loading commander (start-up budget: 1.5x `node -e 0`). A test checks it stays in sync.
import { writeFileSync } from "node:fs";
import { renderHelp } from "../dist/cli/program.js";

writeFileSync(new URL("../dist/cli/help.txt", import.meta.url), renderHelp());
