import { Clock, SYSTEM_CLOCK, whenAborted } from '../util/async';
import { SvcError, cancelled } from '../util/errors';
import { catalogText } from '../util/catalog-text';

export interface GateOptions {
  /** Requests per minute; 0 turns the rate limit off. */
  ratePerMinute: number;
  /** Requests in flight at once; 0 means no cap. */
  maxConcurrency: number;
  /** Waiting requests beyond this are refused with QUEUE_FULL. */
  maxQueue: number;
  /** A schedule shared with other instances that the rate limit takes its slots from; without one, this gate's own. */
  pacer?: Pacer;
  clock?: Clock;
}

/**
 * An even schedule kept elsewhere (in Redis, shared by instances): each call reserves the next `count` free slots, one
 * interval apart, and resolves how many ms from now the first begins; never rejects.
 */
export interface Pacer {
  reserve(intervalMs: number, count: number): Promise<number>;
}

/** The schedule of one process: a bucket of one token refilled every interval. */
export class LocalPacer {
  private nextSlotAt = 0;

  constructor(private readonly clock: Clock = SYSTEM_CLOCK) {}

  /** `Pacer.reserve`, replying at once. */
  reserve(intervalMs: number, count = 1): number {
    const now = this.clock.now();
    const slot = Math.max(now, this.nextSlotAt);
    this.nextSlotAt = slot + intervalMs * count;
    return slot - now;
  }
}

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (err: Error) => void;
  stopListening?: () => void;
}

/**
 * Admits requests in arrival order under a rate limit and a concurrency cap. The rate limit spaces requests evenly: a
 * burst allowance would let a server's sliding one-minute window see more than `rate` requests, the very 429 the limit
 * avoids. A slot is reserved only for a request the cap lets go, so a long local queue never books a shared schedule
 * more than the cap ahead of other instances; slots booked together keep their spacing however late the replies come.
 * A shared schedule is asked for several slots in one call (`slotsToBook`): one round trip per few requests.
 */
export class RequestGate {
  private readonly intervalMs: number;
  private readonly local: LocalPacer;
  private inFlight = 0;
  private readonly queue: Waiter[] = [];
  /** True while the head of the queue waits for a slot of this gate's own schedule. */
  private admitting = false;
  /** Slots asked of the shared schedule, or reserved and not yet begun: each will admit the head of the queue. */
  private reserving = 0;
  private timer: unknown;
  /** The timers of the slots reserved from the shared schedule. */
  private readonly slotTimers = new Set<unknown>();
  private closed = false;
  private readonly clock: Clock;

  constructor(private readonly options: GateOptions) {
    this.intervalMs = options.ratePerMinute > 0 ? 60_000 / options.ratePerMinute : 0;
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.local = new LocalPacer(this.clock);
  }

  get ratePerMinute(): number {
    return this.options.ratePerMinute;
  }

  get waiting(): number {
    return this.queue.length;
  }

  get active(): number {
    return this.inFlight;
  }

  /** The release function at once when a request may go without waiting (no promise of its own); undefined, then `acquire` queues it. */
  admitNow(): (() => void) | undefined {
    if (this.closed || this.intervalMs > 0 || this.queue.length > 0 || !this.concurrencyFree()) return undefined;
    return this.grant();
  }

  /** Resolves with a release function once the request may go; call it when the request ends. */
  acquire(signal?: AbortSignal, onQueued?: (position: number) => void): Promise<() => void> {
    if (this.closed) return Promise.reject(cancelled());
    if (signal?.aborted) return Promise.reject(cancelled());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      this.queue.push(waiter);
      this.pump();
      if (!this.queue.includes(waiter)) return;
      if (this.queue.length > this.options.maxQueue) {
        this.queue.pop();
        reject(
          new SvcError('QUEUE_FULL', catalogText('error.queueFull', { max: this.options.maxQueue }), {
            notSent: true,
          }),
        );
        return;
      }
      if (signal) {
        waiter.stopListening = whenAborted(signal, () => {
          const index = this.queue.indexOf(waiter);
          if (index >= 0) this.queue.splice(index, 1);
          reject(cancelled());
        });
      }
      onQueued?.(this.queue.length);
    });
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    for (const timer of this.slotTimers) this.clock.clearTimer(timer);
    this.slotTimers.clear();
    for (const waiter of this.queue.splice(0)) {
      waiter.stopListening?.();
      waiter.reject(cancelled());
    }
  }

  private concurrencyFree(): boolean {
    return this.options.maxConcurrency <= 0 || this.inFlight + this.reserving < this.options.maxConcurrency;
  }

  /** Lets the head of the queue go while it may, reserving slots: one at a time from this gate's schedule, several from a shared one. */
  private pump(missedSlot = false): void {
    const { pacer } = this.options;
    if (pacer && this.intervalMs > 0) {
      this.book(pacer, missedSlot);
      return;
    }
    while (!this.closed && !this.admitting && this.queue.length > 0 && this.concurrencyFree()) {
      const reservedAt = this.clock.now();
      const wait = this.intervalMs > 0 ? this.local.reserve(this.intervalMs) : 0;
      if (wait === 0) {
        this.admitHead();
        missedSlot = false;
        continue;
      }
      this.admitting = true;
      this.admitAt(reservedAt + wait, missedSlot, false);
      return;
    }
  }

  /** Reserves `slotsToBook` slots of the shared schedule in one call; each admits the head of the queue when it begins. */
  private book(pacer: Pacer, missedSlot: boolean): void {
    const count = this.closed ? 0 : this.slotsToBook();
    if (count === 0) return;
    this.reserving += count;
    // The wait counts from the reply: a slot that began before the reply came goes then, as its own (reserving again would
    // cost another slot), and the slots booked with it keep their spacing after it.
    const admitFrom = (first: number) => {
      for (let slot = 0; slot < count; slot++) this.admitAt(first + slot * this.intervalMs, missedSlot && slot === 0, true);
    };
    pacer.reserve(this.intervalMs, count).then(
      (ms) => admitFrom(this.clock.now() + ms),
      () => admitFrom(this.clock.now()),
    );
  }

  /** Every slot the queue and the cap let go, once at most as many are still to begin: 0 until then. */
  private slotsToBook(): number {
    const wanted = this.queue.length - this.reserving;
    const room = this.options.maxConcurrency > 0 ? this.options.maxConcurrency - this.inFlight - this.reserving : wanted;
    const count = Math.min(wanted, room);
    return count > 0 && count >= this.reserving ? count : 0;
  }

  /**
   * Admits the head of the queue at `due`. A slot whose timer fired more than a quarter interval late is given up and a
   * new one reserved, once: sent late, the request would crowd the next slots, which another instance may hold.
   */
  private admitAt(due: number, missedSlot: boolean, reserved: boolean): void {
    if (this.closed) return;
    const admit = () => {
      if (reserved) {
        this.slotTimers.delete(timer);
        this.reserving--;
      } else {
        this.timer = undefined;
        this.admitting = false;
      }
      if (!missedSlot && this.clock.now() - due > this.intervalMs / 4) {
        this.pump(true);
        return;
      }
      this.admitHead();
      this.pump();
    };
    const ms = due - this.clock.now();
    let timer: unknown;
    if (ms <= 0) admit();
    else if (reserved) {
      timer = this.clock.setTimer(admit, ms);
      this.slotTimers.add(timer);
    } else this.timer = this.clock.setTimer(admit, ms);
  }

  /** The slot goes to whoever heads the queue now (an earlier head may have been aborted meanwhile). */
  private admitHead(): void {
    const waiter = this.queue.shift();
    if (!waiter) return;
    waiter.stopListening?.();
    waiter.resolve(this.grant());
  }

  /** Counts a request in flight; the function returned ends it (once, however often it is called). */
  private grant(): () => void {
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
      this.pump();
    };
  }
}
