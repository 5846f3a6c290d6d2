// The pure parts of a sandboxed server's guard (src/hosts/sandbox/server-guard.ts): the config it adds,
// the command that hands opencode its password, and what its report allows.
import { readFileSync, rmSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  type GuardReport,
  guardProblem,
  parseGuardReport,
  serveReadingPassword,
  withGuardPlugin,
  writeGuardPlugin,
} from "../../src/hosts/sandbox/server-guard.js";

const safe: GuardReport = { removed: true, sealed: "yes", capless: true, pid: 7 };

describe("the guard plugin in opencode's configuration", () => {
  it("is added to the plugins already named, and the rest of the content is kept", () => {
    expect(JSON.parse(withGuardPlugin('{"model":"a/b","plugin":["x"]}', "file:///g.js"))).toEqual({
      model: "a/b",
      plugin: ["x", "file:///g.js"],
    });
    expect(JSON.parse(withGuardPlugin(undefined, "file:///g.js"))).toEqual({ plugin: ["file:///g.js"] });
    expect(JSON.parse(withGuardPlugin("not json", "file:///g.js"))).toEqual({ plugin: ["file:///g.js"] });
  });

  it("is written read-only, and prints its report on stdout", () => {
    const { url, dir } = writeGuardPlugin();
    try {
      const file = fileURLToPath(url);
      expect(statSync(file).mode & 0o777).toBe(0o444);
      const source = readFileSync(file, "utf8");
      expect(source).toContain("delete process.env[NAME]");
      expect(source).toContain('writeSync(1, "oc-exec-guard " + JSON.stringify(');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("opencode serve reads its password from stdin", () => {
  it("the last shell reads one line, exports it and becomes opencode", () => {
    expect(serveReadingPassword("/bin/opencode", ["serve", "--port", "4096"])).toEqual({
      file: "/bin/sh",
      args: [
        "-c",
        'IFS= read -r OPENCODE_SERVER_PASSWORD || exit 78; export OPENCODE_SERVER_PASSWORD; exec "$@" </dev/null',
        "oc-exec-serve",
        "/bin/opencode",
        "serve",
        "--port",
        "4096",
      ],
    });
  });
});

describe("the guard's report", () => {
  it("is read from its line only", () => {
    expect(parseGuardReport(`oc-exec-guard ${JSON.stringify(safe)}`)).toEqual(safe);
    expect(parseGuardReport("opencode server listening on http://127.0.0.1:4096")).toBeNull();
    expect(parseGuardReport("oc-exec-guard {")).toBeNull();
    expect(parseGuardReport('oc-exec-guard {"removed":true,"sealed":"maybe","capless":true,"pid":1}')).toBeNull();
  });

  it("decides whether the server may serve: every protection, or a reason", () => {
    expect(guardProblem(safe, "linux")).toBeNull();
    expect(guardProblem({ ...safe, sealed: "unsupported" }, "darwin")).toBeNull();
    expect(guardProblem(null, "linux")).toMatch(/^opencode did not load oc-exec's guard plugin/);
    expect(guardProblem({ ...safe, removed: false }, "linux")).toBe("opencode serve started without its password");
    expect(guardProblem({ ...safe, sealed: "no" }, "linux")).toMatch(/could not make opencode serve unreadable/);
    expect(guardProblem({ ...safe, sealed: "unsupported" }, "linux")).toMatch(
      /could not make opencode serve unreadable/,
    );
    expect(guardProblem({ ...safe, capless: false }, "linux")).toMatch(/could not take the capabilities away/);
  });
});
