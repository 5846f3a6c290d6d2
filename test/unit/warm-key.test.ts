// Which turns may share a warm server (--warm): the fit key, pure.
import { describe, expect, it } from "vitest";
import { serverEnvironment, warmKey } from "../../src/hosts/warm/warm-key.js";

const base = {
  dir: "/repo",
  binary: "/bin/opencode",
  version: "1.18.33",
  configContent: undefined,
  sandbox: null,
  models: [null],
  env: { HOME: "/home/u", PATH: "/bin", GITHUB_TOKEN: "one", PWD: "/repo", SHLVL: "2", _: "/usr/bin/oc-exec" },
};

describe("warmKey", () => {
  it("the same turn from another call of the same script fits: what a shell changes between calls is ignored", () => {
    expect(warmKey({ ...base, env: { ...base.env, PWD: "/elsewhere", SHLVL: "3", _: "x", OLDPWD: "/" } })).toBe(
      warmKey(base),
    );
  });

  it("anything the server's tools would see differently does not: a secret, a variable, the config, the workspace, the binary", () => {
    const key = warmKey(base);
    for (const other of [
      { ...base, env: { ...base.env, GITHUB_TOKEN: "two" } },
      { ...base, env: { ...base.env, GITHUB_ACTION: "step-2" } },
      { ...base, configContent: '{"model":"a/b"}' },
      { ...base, dir: "/other" },
      { ...base, binary: "/opt/opencode" },
      { ...base, version: "1.18.34" },
      { ...base, sandbox: { mode: "read-only" as const, writable: [], readable: [], allowHosts: [], passEnv: [] } },
    ])
      expect(warmKey(other)).not.toBe(key);
  });

  it("models count only in a sandbox (they choose the providers it lets through)", () => {
    expect(warmKey({ ...base, models: ["a/b"] })).toBe(warmKey(base));
    const sandbox = { mode: "read-only" as const, writable: [], readable: [], allowHosts: [], passEnv: [] };
    expect(warmKey({ ...base, sandbox, models: ["a/b"] })).not.toBe(warmKey({ ...base, sandbox }));
  });

  it("the server's environment carries the merged configuration, or none", () => {
    expect(serverEnvironment({ OPENCODE_CONFIG_CONTENT: "{}", A: "1" }, '{"x":1}')).toEqual({
      OPENCODE_CONFIG_CONTENT: '{"x":1}',
      A: "1",
    });
    expect(serverEnvironment({ OPENCODE_CONFIG_CONTENT: "{}", A: "1" }, undefined)).toEqual({ A: "1" });
  });
});
