// A warm ACP agent's pure parts: the lines its broker and a run say to each other
// (hosts/warm/broker-protocol.ts), and which runs fit an agent (warm-agent.ts's key).
import { describe, expect, it } from "vitest";
import {
  brokerLine,
  initializeAnswer,
  readBrokerLine,
  resultOf,
  rpcShape,
} from "../../src/hosts/warm/broker-protocol.js";
import { warmAgentKey } from "../../src/hosts/warm/warm-agent.js";

describe("the broker's own lines", () => {
  it("each kind, read back as written; a JSON-RPC message is none of them", () => {
    for (const line of [
      { oc_exec_broker: "ready" },
      { oc_exec_broker: "busy" },
      { oc_exec_broker: "retire" },
      { oc_exec_broker: "log", line: "INFO started" },
      { oc_exec_broker: "exit", exitCode: null, signal: "SIGTERM" },
    ] as const)
      expect(readBrokerLine(brokerLine(line).trimEnd())).toEqual(line);
    expect(readBrokerLine('{"jsonrpc":"2.0","method":"session/update","params":{"oc_exec_broker":"exit"}}')).toBeNull();
    expect(readBrokerLine('{"oc_exec_broker":')).toBeNull();
  });
});

describe("what the broker must know of a JSON-RPC line", () => {
  it("requests, responses and notifications by their id and method; anything else is other", () => {
    expect(rpcShape('{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}')).toEqual({
      kind: "request",
      id: 3,
      method: "session/prompt",
    });
    expect(rpcShape('{"jsonrpc":"2.0","id":"a","result":{}}')).toEqual({ kind: "response", id: "a" });
    expect(rpcShape('{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"x"}}')).toEqual({
      kind: "response",
      id: 4,
    });
    expect(rpcShape('{"jsonrpc":"2.0","method":"session/cancel","params":{}}')).toEqual({ kind: "notification" });
    for (const other of ["", "garbage", "[1,2]", "null", '{"id":null}'])
      expect(rpcShape(other)).toEqual({ kind: "other" });
  });

  it("a later run's initialize is answered with the first one's result, under its own id", () => {
    const result = resultOf('{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"OpenCode"}}}');
    expect(JSON.parse(initializeAnswer(7, result))).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: { protocolVersion: 1, agentInfo: { name: "OpenCode" } },
    });
  });
});

describe("which runs fit a warm agent", () => {
  const launch = {
    file: "/usr/bin/gemini",
    args: ["--acp"],
    cwd: "/work/repo",
    env: { PATH: "/usr/bin", GEMINI_API_KEY: "k1", SHLVL: "1", _: "/usr/bin/oc-exec" },
  };
  it("the same command, directory and environment, whatever a shell changes between two calls", () => {
    expect(warmAgentKey({ ...launch, env: { ...launch.env, SHLVL: "3", _: "/bin/x", OLDPWD: "/" } })).toBe(
      warmAgentKey(launch),
    );
    expect(warmAgentKey(launch)).toMatch(/^acp-[0-9a-f]{28}$/);
  });
  it("another key, directory, command or argument: another agent", () => {
    const key = warmAgentKey(launch);
    expect(warmAgentKey({ ...launch, env: { ...launch.env, GEMINI_API_KEY: "k2" } })).not.toBe(key);
    expect(warmAgentKey({ ...launch, cwd: "/work/other" })).not.toBe(key);
    expect(warmAgentKey({ ...launch, file: "/usr/local/bin/gemini" })).not.toBe(key);
    expect(warmAgentKey({ ...launch, args: ["--acp", "--yolo"] })).not.toBe(key);
  });
});
