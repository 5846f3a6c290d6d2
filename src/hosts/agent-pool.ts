// A batch's ACP agents, shared between its tasks: a task through an agent takes one that is idle
// and was started for the same placement, or starts one; when the task ends, an agent that answered
// every turn (none stopped, none lost it) waits for the next task instead of ending. Each task is a
// session of its own on it, as a conversation's turns are. An agent serves one prompt at a time, so
// tasks side by side get one agent each. The batch's end ends them all.
//
// Only a local agent without a sandbox is shared. A sandbox is each task's own boundary, with its
// own throwaway HOME that its agent may write; a task must not inherit what another task's agent
// left there. On an --ssh host the agent is the task's own too.
import type { Backend, BackendMaker } from "../engine/backend.js";
import type { Placement } from "../plan/placement.js";
import type { AcpBackend } from "./acp/acp-backend.js";
import { makeAcpHost } from "./make-backend.js";

type AcpPlacement = Placement & { acp: NonNullable<Placement["acp"]> };

export type AgentPool = {
  /** What a task through `placement`'s agent opens its backend with. */
  maker(placement: AcpPlacement): BackendMaker;
  /** Ends every agent the pool holds; a task still running keeps its own until it ends. */
  close(): Promise<void>;
};

/**
 * What starts an agent: the agent, its command, where it runs and with what it starts (environment,
 * policy, opencode's configuration). Two tasks with the same key get the same agent process.
 */
const keyOf = (p: AcpPlacement) =>
  JSON.stringify([p.acp.argv, p.acp.name, p.opencode, p.dir, p.env, p.policy, p.opencodeConfig, p.startupTimeout]);

/** Whether tasks through this placement may share an agent: local, unsandboxed. */
const shareable = (p: AcpPlacement) => p.sandbox === null && p.ssh === null;

export function makeAgentPool(make: typeof makeAcpHost = makeAcpHost): AgentPool {
  const idle = new Map<string, AcpBackend[]>();
  let closed = false;
  const endAll = async (backends: AcpBackend[]) => {
    for (const backend of backends) await backend.close?.();
  };
  /** An idle agent for `key`; one that went away while it waited (crashed, killed) is ended, not lent. */
  const takeIdle = async (key: string): Promise<AcpBackend | null> => {
    for (let agent = idle.get(key)?.pop(); agent; agent = idle.get(key)?.pop()) {
      if (agent.reusable()) return agent;
      await agent.close?.();
    }
    return null;
  };
  return {
    maker(placement) {
      if (!shareable(placement)) return (startup) => make(placement, startup);
      const key = keyOf(placement);
      return async (startup): Promise<Backend> => {
        const lent = (await takeIdle(key)) ?? (await make(placement, startup));
        return {
          ...lent,
          // Back to the pool for the next task, or ended: one stopped mid-turn may still be busy.
          close: async () => {
            if (!closed && lent.reusable()) idle.set(key, [...(idle.get(key) ?? []), lent]);
            else await lent.close?.();
          },
        };
      };
    },
    async close() {
      closed = true;
      const all = [...idle.values()].flat();
      idle.clear();
      await endAll(all);
    },
  };
}
