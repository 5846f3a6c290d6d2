// Recorded opencode output, one folder per opencode version and scenario.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const FIXTURES = fileURLToPath(new URL("../fixtures", import.meta.url));
export const FAKE_OPENCODE = fileURLToPath(new URL("./fake-opencode.mjs", import.meta.url));

export type Fixture = {
  version: string;
  scenario: string;
  dir: string;
  stdout: Buffer;
  stderr: Buffer;
  meta: { opencode_version: string; exit_code: number | null; signal: string | null; args: string[] };
};

export function fixtureVersions(): string[] {
  return readdirSync(FIXTURES)
    .filter((d) => d.startsWith("opencode-"))
    .map((d) => d.slice("opencode-".length))
    .sort();
}

export function loadFixture(version: string, scenario: string): Fixture | null {
  const dir = join(FIXTURES, `opencode-${version}`, scenario);
  if (!existsSync(join(dir, "meta.json"))) return null;
  return {
    version,
    scenario,
    dir,
    stdout: readFileSync(join(dir, "stdout.txt")),
    stderr: readFileSync(join(dir, "stderr.txt")),
    meta: JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as Fixture["meta"],
  };
}
