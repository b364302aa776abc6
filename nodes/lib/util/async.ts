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

/**
 * Calls `callback` once when `signal` aborts, unless the returned function is called first; nothing
 * when it has aborted already (as with `addEventListener`). Every wait and request of the pack listens
 * this way: a node's messages share one signal (node-red/runner.ts), and an `AbortSignal` walks all of
 * its listeners on every add and remove, which at 64 messages under way cost more than the message's
 * own bookkeeping. Here each signal gets one listener, and a callback is added and removed in constant
 * time, in a list of links (a Set under constant adds and removes keeps reallocating its table, which
 * lives long enough to be copied by the garbage collector).
 */
export function whenAborted(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) return () => undefined;
  const list = abortCallbacks.get(signal) ?? listenTo(signal);
  const link: AbortCallback = { callback, previous: list.last };
  if (list.last) list.last.next = link;
  else list.first = link;
  list.last = link;
  return () => {
    if (link.removed) return;
    link.removed = true;
    if (link.previous) link.previous.next = link.next;
    else list.first = link.next;
    if (link.next) link.next.previous = link.previous;
    else list.last = link.previous;
    // A removed link points nowhere: one the collector has not found dead yet (in the old generation, say)
    // would otherwise keep every link after it alive, and with them their exchanges.
    link.previous = link.next = undefined;
  };
}

/** The callbacks waiting for one signal, in the order they were added. */
interface AbortCallbacks {
  first?: AbortCallback;
  last?: AbortCallback;
}

interface AbortCallback {
  callback: () => void;
  previous?: AbortCallback;
  next?: AbortCallback;
  removed?: boolean;
}

const abortCallbacks = new WeakMap<AbortSignal, AbortCallbacks>();

/** The list of a signal not listened to yet, and the one listener that calls it. */
function listenTo(signal: AbortSignal): AbortCallbacks {
  const list: AbortCallbacks = {};
  abortCallbacks.set(signal, list);
  signal.addEventListener('abort', () => callAll(signal, list), { once: true });
  return list;
}

function callAll(signal: AbortSignal, list: AbortCallbacks): void {
  abortCallbacks.delete(signal);
  const links: AbortCallback[] = [];
  for (let link = list.first; link; link = link.next) links.push(link);
  for (const link of links) {
    if (link.removed) continue;
    link.removed = true;
    link.previous = link.next = undefined;
    try {
      link.callback();
    } catch (err) {
      // As an AbortSignal's listener would: reported, and the other callbacks still called.
      process.nextTick(() => {
        throw err;
      });
    }
  }
}

/** Waits, unless the signal ends the wait first. Leaves no timer behind either way. */
export function sleep(ms: number, signal?: AbortSignal, timers: Timers = SYSTEM_CLOCK): Promise<void> {
  if (signal?.aborted) return Promise.reject(cancelled());
  return new Promise((resolve, reject) => {
    const stopListening = signal
      ? whenAborted(signal, () => {
          timers.clearTimer(timer);
          reject(cancelled());
        })
      : undefined;
    const timer = timers.setTimer(() => {
      stopListening?.();
      resolve();
    }, ms);
  });
}

/** `promise`, unless `signal` aborts first: then rejected at once as CANCELLED. Leaves no listener behind either way. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const stopListening = whenAborted(signal, () => reject(cancelled()));
    promise.then(
      (value) => {
        stopListening();
        resolve(value);
      },
      (err: unknown) => {
        stopListening();
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
