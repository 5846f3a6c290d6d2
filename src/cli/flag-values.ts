// The values of flags that name files or carry small languages: --config FILE.json, --mcp
// NAME=COMMAND ARGS and --output-schema FILE. Each problem is a usage error naming its flag.
import { readFileSync } from "node:fs";
import { isObj, type Obj } from "../domain/opencode/config-content.js";
import { ConfigError } from "../domain/outcome/errors.js";
import { splitCommand } from "../kernel/command-words.js";

function readJson(flag: string, path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message;
    throw new ConfigError(`${flag} ${path}: ${why}`, "UsageError");
  }
}

export function readConfigFile(path: string): Obj {
  const value = readJson("--config", path);
  if (!isObj(value)) throw new ConfigError(`--config ${path}: not a JSON object`, "UsageError");
  return value;
}

export function readOutputSchema(path: string): object {
  const schema = readJson("--output-schema", path);
  if (typeof schema !== "object" || schema === null)
    throw new ConfigError(`--output-schema ${path}: not a JSON Schema object`, "UsageError");
  return schema;
}

/** Splits a command line on spaces, keeping "quoted" and 'quoted' words whole. */
export function parseMcp(spec: string): Obj {
  const eq = spec.indexOf("=");
  const name = spec.slice(0, eq).trim();
  const command = splitCommand(spec.slice(eq + 1));
  if (eq <= 0 || !/^[A-Za-z0-9_-]+$/.test(name) || command.length === 0) {
    throw new ConfigError(`--mcp takes NAME=COMMAND [ARGS...], not ${JSON.stringify(spec)}`, "UsageError");
  }
  return { mcp: { [name]: { type: "local", command, enabled: true } } };
}
