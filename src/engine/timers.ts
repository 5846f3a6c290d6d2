// The three timeouts of a turn. The whole-turn timer runs from spawn; the start-up timer waits
// for the first JSON line and is re-armed by plain-text signs of life before it (a slow database
// migration prints such lines); the idle timer is re-armed by any output at all. When the turn
// starts opencode, its own start (a second or two of silence) is the start-up timer's to judge: the
// idle timer runs from the first output (`--idle-timeout 1s` failed plain turns at 1.04 s), or from
// spawn when the start-up timer is off, so that a silent opencode is still bounded. On a running
// server there is no start to wait for: it runs from the start.
import type { TimeoutKind } from "../domain/outcome/classify.js";

export type TimerLimits = {
  turnMs: number | null;
  startupMs: number | null;
  idleMs: number | null;
  /** The idle timer waits for the first output (opencode starting up), when a start-up timer runs. */
  idleFromFirstOutput?: boolean;
};

export class TurnTimers {
  private turn: NodeJS.Timeout | null = null;
  private startup: NodeJS.Timeout | null = null;
  private idle: NodeJS.Timeout | null = null;
  private fired = false;
  private cleared = false;
  /** The idle timer runs: from the first output, or from the start when no start-up timer does. */
  private idling = false;

  constructor(
    private readonly limits: TimerLimits,
    private readonly onTimeout: (kind: TimeoutKind, ms: number) => void,
  ) {}

  private arm(kind: TimeoutKind, ms: number | null): NodeJS.Timeout | null {
    if (!ms || ms <= 0) return null;
    return setTimeout(() => {
      if (this.fired) return;
      this.fired = true;
      this.onTimeout(kind, ms);
    }, ms);
  }

  start(): void {
    this.turn = this.arm("turn", this.limits.turnMs);
    this.startup = this.arm("startup", this.limits.startupMs);
    if (this.startup === null || !this.limits.idleFromFirstOutput) this.startIdling();
  }

  private startIdling(): void {
    if (this.idling || this.cleared) return;
    this.idling = true;
    this.idle = this.arm("idle", this.limits.idleMs);
  }

  activity(): void {
    if (!this.idling) return this.startIdling();
    if (this.idle) this.idle.refresh();
  }

  /** While our consumer holds us back, opencode's silence is ours: the idle timer waits. */
  hold(held: boolean): void {
    if (held) {
      if (this.idle) clearTimeout(this.idle);
      this.idle = null;
    } else if (this.idle === null && this.idling && !this.cleared) {
      this.idle = this.arm("idle", this.limits.idleMs);
    }
  }

  signOfLife(): void {
    if (this.startup) this.startup.refresh();
  }

  firstJson(): void {
    if (this.startup) clearTimeout(this.startup);
    this.startup = null;
  }

  clear(): void {
    for (const t of [this.turn, this.startup, this.idle]) if (t) clearTimeout(t);
    this.turn = this.startup = this.idle = null;
    this.cleared = true;
  }
}
