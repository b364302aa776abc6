import type { Clock } from '../../nodes/lib/util/async';
import { settle } from './wait';

/** A clock moved by hand, for code that takes a `Clock` (util/async.ts): time passes only when a test says so. */

/** A clock that moves only when told to, firing the timers that fall due on the way. */
export class ManualClock implements Clock {
  private time = 1_000_000;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();
  private nextId = 1;

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, callback });
    return id;
  }

  clearTimer(timer: unknown): void {
    this.timers.delete(timer as number);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  /** How far ahead the earliest timer is due; undefined when none is set. */
  nextTimerIn(): number | undefined {
    const next = Math.min(...[...this.timers.values()].map((timer) => timer.at));
    return Number.isFinite(next) ? Math.max(0, next - this.time) : undefined;
  }

  /** Moves time on by `ms` without firing any timer, as a stalled event loop does. */
  stall(ms: number): void {
    this.time += ms;
  }

  /** Moves time on by `ms`, firing each timer at its own time, in order, and letting promises settle after each. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, timer]) => timer.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      // An overdue timer (after `stall`) fires late, at the present time.
      this.time = Math.max(this.time, due[1].at);
      due[1].callback();
      await settle();
    }
    this.time = end;
    await settle();
  }
}

/**
 * Runs `work` to its end, moving `clock` to each timer set once no request is in flight (none is while
 * a timer waits): a poller's minutes of waits take no real minute.
 */
export async function onClock<T>(clock: ManualClock, work: Promise<T>): Promise<T> {
  let settled = false;
  const done = work.finally(() => (settled = true));
  done.catch(() => undefined);
  while (!settled) {
    const next = clock.nextTimerIn();
    if (next === undefined) await new Promise((resolve) => setTimeout(resolve, 2));
    else await clock.advance(next);
  }
  return done;
}
