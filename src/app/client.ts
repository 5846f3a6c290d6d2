// The library's entry points in the shape of the Codex SDK: a client bound to an opencode binary
// and environment, sessions on it, turns in a session. A Session resumes its own opencode session
// from its second turn on.
import type { ClientOptions, SessionOptions, TurnOptions } from "../plan/options.js";
import { runTurn, type Turn } from "./run-turn.js";

export class OcExec {
  constructor(private readonly options: ClientOptions = {}) {}

  /** A session: its first turn starts (or resumes, or forks) one; later turns continue it. */
  session(options: SessionOptions = {}): Session {
    return new Session(this.options, options);
  }

  /** One turn, on its own. */
  runTurn(prompt: string, options: SessionOptions & TurnOptions = {}): Turn {
    return runTurn({ ...this.options, ...options, prompt });
  }
}

export class Session {
  private sessionId: string | null;
  private running = false;

  constructor(
    private readonly client: ClientOptions,
    private readonly options: SessionOptions,
  ) {
    this.sessionId = options.session ?? null;
  }

  /** The opencode session id, once a turn has reported it. */
  get id(): string | null {
    return this.sessionId;
  }

  /** Runs one turn in this session. One at a time: a session's turns build on each other. */
  run(prompt: string, options: TurnOptions = {}): Turn {
    if (this.running) throw new Error("this session already has a turn running; wait for its result first");
    const resuming = this.sessionId !== null && this.sessionId !== this.options.session;
    const turn = runTurn({
      ...this.client,
      ...this.options,
      // From the second turn on, continue the session the first one ran in (its fork, if forked).
      ...(resuming ? { session: this.sessionId ?? undefined, continue: false, fork: false } : {}),
      ...options,
      prompt,
    });
    const self = this;
    return {
      abort: (reason) => turn.abort(reason),
      async *[Symbol.asyncIterator]() {
        self.running = true;
        try {
          for await (const event of turn) {
            if (event.session_id && !self.options.ephemeral) self.sessionId = event.session_id;
            yield event;
          }
        } finally {
          self.running = false;
        }
      },
    };
  }
}
