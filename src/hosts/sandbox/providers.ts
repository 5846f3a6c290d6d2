// Which hosts and credential variables a sandboxed turn needs: the API host of every model the turn
// may use (the chosen one, opencode's small_model) and of every remote MCP server, from the user's
// own opencode configuration (a custom baseURL wins) or, for opencode's built-in providers, from
// this table. Never from the workspace's files: a pull request writes those, and a host named there
// would get the real key (the proxy puts it into requests to the providers' hosts).
// Pure: the configuration sources in, the allow-list out.
import { type ConfigSource, sourceLabel } from "../../domain/opencode/config-sources.js";
import type { AcpSandboxNeeds } from "../../plan/acp-spec.js";

/** opencode's built-in providers: where their API is and which variables hold their keys. */
export const KNOWN_PROVIDERS: Record<string, { hosts: string[]; env: string[] }> = {
  anthropic: { hosts: ["api.anthropic.com:443"], env: ["ANTHROPIC_API_KEY"] },
  openai: { hosts: ["api.openai.com:443"], env: ["OPENAI_API_KEY"] },
  google: {
    hosts: ["generativelanguage.googleapis.com:443"],
    env: ["GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"],
  },
  openrouter: { hosts: ["openrouter.ai:443"], env: ["OPENROUTER_API_KEY"] },
  groq: { hosts: ["api.groq.com:443"], env: ["GROQ_API_KEY"] },
  mistral: { hosts: ["api.mistral.ai:443"], env: ["MISTRAL_API_KEY"] },
  deepseek: { hosts: ["api.deepseek.com:443"], env: ["DEEPSEEK_API_KEY"] },
  xai: { hosts: ["api.x.ai:443"], env: ["XAI_API_KEY"] },
  togetherai: { hosts: ["api.together.xyz:443"], env: ["TOGETHER_AI_API_KEY"] },
  fireworks: { hosts: ["api.fireworks.ai:443"], env: ["FIREWORKS_API_KEY"] },
  cerebras: { hosts: ["api.cerebras.ai:443"], env: ["CEREBRAS_API_KEY"] },
  opencode: { hosts: ["opencode.ai:443"], env: ["OPENCODE_API_KEY"] },
};

/** `host:port` of a URL (the scheme's port when none is written), or null when it is not one. */
export function hostOfUrl(url: string): string | null {
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    return `${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`;
  } catch {
    return null;
  }
}

export type ProviderCredential = { name: string; hosts: string[]; tls: boolean };
export type ProviderHosts = { hosts: string[]; tls: boolean };

export type ProviderNeeds = {
  /** host:port entries, sorted, without duplicates. */
  hosts: string[];
  /** Variables that hold the providers' keys (named in the table or as {env:NAME} in the config). */
  credentialVars: string[];
  /**
   * Each credential variable with the hosts of its provider (where the proxy may put its real
   * value) and whether any of them speaks TLS (the proxy must terminate it to do so).
   */
  credentials: ProviderCredential[];
  /**
   * The providers of the turn's models (not the MCP servers), each with its hosts and whether it
   * speaks TLS: where a key from opencode's own key store may go.
   */
  providers: ProviderHosts[];
  /** What the configuration does not say (a model without a provider, a provider with no known host). */
  problems: string[];
};

const providerOf = (model: unknown): string | null =>
  typeof model === "string" && model.includes("/") ? model.slice(0, model.indexOf("/")) : null;

/** The last value a source sets wins, as opencode merges its configuration. */
function last<T>(sources: ConfigSource[], pick: (s: ConfigSource) => T | undefined): T | undefined {
  let value: T | undefined;
  for (const s of sources) value = pick(s) ?? value;
  return value;
}

export function providerNeeds(all: ConfigSource[], model: string | null): ProviderNeeds {
  // The workspace may choose the model (opencode reads its `model`), among the providers the user's
  // own configuration and the built-in table place; everything else comes from trusted sources.
  const sources = all.filter((s) => s.trusted);
  const hosts = new Set<string>();
  const vars = new Set<string>();
  const credentials: ProviderCredential[] = [];
  const providerHosts: ProviderHosts[] = [];
  const problems: string[] = [];
  const chosen = model ?? last(all, (s) => (typeof s.config.model === "string" ? s.config.model : undefined));
  const small = last(sources, (s) => (typeof s.config.small_model === "string" ? s.config.small_model : undefined));
  if (!chosen)
    problems.push(
      "no model is named (-m provider/model, or `model` in opencode's configuration), so the sandbox cannot tell which provider to let through",
    );
  const providers = new Set([providerOf(chosen), providerOf(small)].filter((p): p is string => p !== null));
  for (const id of providers) {
    const options = (s: ConfigSource) => s.config.provider?.[id]?.options;
    const baseURL = last(sources, (s) =>
      typeof options(s)?.baseURL === "string" ? (options(s)!.baseURL as string) : undefined,
    );
    const apiKey = last(sources, (s) =>
      typeof options(s)?.apiKey === "string" ? (options(s)!.apiKey as string) : undefined,
    );
    const names = [
      ...[...(apiKey ?? "").matchAll(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!),
      ...(KNOWN_PROVIDERS[id]?.env ?? []),
    ];
    for (const name of names) vars.add(name);
    const host = baseURL ? hostOfUrl(baseURL) : null;
    const own = host ? [host] : (KNOWN_PROVIDERS[id]?.hosts ?? []);
    for (const h of own) hosts.add(h);
    // The known providers' hosts are all https.
    const tls = host ? baseURL!.startsWith("https:") : own.length > 0;
    if (own.length > 0) providerHosts.push({ hosts: own, tls });
    for (const name of names) credentials.push({ name, hosts: own, tls });
    if (own.length === 0)
      problems.push(
        `provider ${id} has no baseURL in opencode's configuration and is not one oc-exec knows the host of: name its host with --allow-host HOST[:PORT]`,
      );
  }
  for (const { config } of sources)
    for (const server of Object.values(config.mcp ?? {}))
      if (server?.type === "remote" && typeof server.url === "string") {
        const host = hostOfUrl(server.url);
        if (host) hosts.add(host);
      }
  return {
    hosts: [...hosts].sort(),
    credentialVars: [...vars].sort(),
    credentials: mergeCredentials(credentials),
    providers: providerHosts,
    problems,
  };
}

/** What a sandbox that runs turns of several models needs: each model's providers, together. */
export function modelsNeeds(sources: ConfigSource[], models: readonly (string | null)[]): ProviderNeeds {
  const each = (models.length > 0 ? models : [null]).map((m) => providerNeeds(sources, m));
  const union = (pick: (n: ProviderNeeds) => string[]) => [...new Set(each.flatMap(pick))].sort();
  return {
    hosts: union((n) => n.hosts),
    credentialVars: union((n) => n.credentialVars),
    credentials: mergeCredentials(each.flatMap((n) => n.credentials)),
    providers: each.flatMap((n) => n.providers),
    problems: [...new Set(each.flatMap((n) => n.problems))],
  };
}

/**
 * What an ACP agent other than opencode needs through the proxy (plan/acp-spec.ts's table): its
 * provider's hosts, or the host a base-URL variable set here names instead; its keys, masked and
 * sent to those hosts only. opencode's configuration is not this agent's: none of it counts.
 */
export function agentNeeds(agent: AcpSandboxNeeds, env: NodeJS.ProcessEnv, shown: string): ProviderNeeds {
  const moved = agent.baseUrls.map((name) => env[name]).find((url): url is string => !!url);
  const host = moved ? hostOfUrl(moved) : null;
  const hosts = host ? [host] : [...agent.hosts];
  // The table's hosts are all https.
  const tls = host ? moved!.startsWith("https:") : true;
  return {
    hosts: [...hosts].sort(),
    credentialVars: [...agent.keys].sort(),
    // Masked over TLS only, where the proxy terminates it and puts the real key in. Over plain HTTP
    // a Node agent (gemini-cli) tunnels through the proxy (CONNECT), which then sees no header to
    // put a key into: the key is passed in as it is, as --pass-env would.
    credentials: tls ? [...agent.keys].sort().map((name) => ({ name, hosts, tls })) : [],
    providers: [{ hosts, tls }],
    problems:
      moved && !host
        ? [`${agent.baseUrls.find((n) => env[n])} is not an http(s) URL: ${JSON.stringify(moved)}`]
        : hosts.length === 0
          ? [
              `${shown} runs in a sandbox with a provider of your own only: set ${agent.baseUrls.join(" or ")}, or name its host with --allow-host HOST[:PORT]`,
            ]
          : [],
  };
}

/** One entry per variable: the hosts of every provider that reads it, TLS if any of them is. */
function mergeCredentials(list: ProviderCredential[]): ProviderCredential[] {
  const byName = new Map<string, ProviderCredential>();
  for (const c of list) {
    const seen = byName.get(c.name);
    byName.set(
      c.name,
      seen ? { name: c.name, hosts: [...new Set([...seen.hosts, ...c.hosts])].sort(), tls: seen.tls || c.tls } : c,
    );
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * What a workspace's configuration may not do under a sandbox, as one message per key: add or
 * change a provider (its baseURL would get the real key, its apiKey `{env:NAME}` would pull a
 * variable in), set small_model, or name a remote MCP server (a host the proxy would let through).
 * The workspace may still set `model` and everything that runs inside the sandbox.
 */
export function untrustedConfigProblems(sources: ConfigSource[], workspace: string): string[] {
  const problems: string[] = [];
  for (const source of sources) {
    if (source.trusted) continue;
    const file = sourceLabel(source, workspace);
    const { config } = source;
    for (const id of Object.keys(config.provider ?? {})) problems.push(`${file} sets provider.${id}`);
    if (config.small_model !== undefined) problems.push(`${file} sets small_model`);
    for (const [name, server] of Object.entries(config.mcp ?? {}))
      if (server?.type === "remote") problems.push(`${file} sets mcp.${name}, a remote MCP server`);
  }
  return problems;
}
