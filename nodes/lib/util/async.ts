import { cancelled } from './errors';

/** A source of timers: the system's unless a test moves a clock by hand. */
export interface Timers {
  setTimer(callback: () => void, ms: number): unknown;
  clearTimer(timer: unknown): void;
}

/** Time and timers: the system's unless a test moves a clock by hand. */
export interface Clock extends Timers {
  now(): number;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  setTimer: (callback, ms) => setTimeout(callback, ms),
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/** Waits, unless the signal ends the wait first. Leaves no timer behind either way. */
export function sleep(ms: number, signal?: AbortSignal, timers: Timers = SYSTEM_CLOCK): Promise<void> {
  if (signal?.aborted) return Promise.reject(cancelled());
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      timers.clearTimer(timer);
      reject(cancelled());
    };
    const timer = timers.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `promise`, unless `signal` aborts first: then rejected at once as CANCELLED. Leaves no listener behind either way. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * Counts events that would flood a log (failed requests from anyone on the network) and reports
 * them at most once per `intervalMs`: the first at once, the rest as one count when the interval
 * has passed. `close` stops the timer (a count not yet reported is dropped with it).
 */
export class ThrottledReport<Detail> {
  private count = 0;
  private last: Detail | undefined;
  private reportedAt = -Infinity;
  private timer: unknown;

  constructor(
    private readonly report: (count: number, last: Detail) => void,
    private readonly intervalMs = 60_000,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  note(detail: Detail, now = this.clock.now()): void {
    this.count++;
    this.last = detail;
    if (this.timer !== undefined) return;
    const wait = this.reportedAt + this.intervalMs - now;
    if (wait <= 0) this.flush(now);
    else {
      this.timer = this.clock.setTimer(() => {
        this.timer = undefined;
        this.flush(this.clock.now());
      }, wait);
    }
  }

  close(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  private flush(now: number): void {
    if (this.count === 0 || this.last === undefined) return;
    this.report(this.count, this.last);
    this.count = 0;
    this.reportedAt = now;
  }
}
