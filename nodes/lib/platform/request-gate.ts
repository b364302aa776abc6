import { message } from '../util/messages';
import { PlatformError, cancelled } from '../util/errors';

export interface GateOptions {
  /** Requests per minute; 0 turns the rate limit off. */
  ratePerMinute: number;
  /** Requests in flight at once; 0 means no cap. */
  maxConcurrency: number;
  /** Waiting requests beyond this are refused with QUEUE_FULL. */
  maxQueue: number;
}

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (err: Error) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * Admits requests in arrival order under a rate limit and a concurrency cap.
 *
 * The rate limit spaces requests evenly (a bucket of one token refilled every 60/rate seconds):
 * a burst allowance would let a sliding one-minute window on the server see more than `rate`
 * requests, which is exactly the 429 the limit exists to avoid.
 */
export class RequestGate {
  private readonly intervalMs: number;
  private nextSlotAt = 0;
  private inFlight = 0;
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: GateOptions) {
    this.intervalMs = options.ratePerMinute > 0 ? 60_000 / options.ratePerMinute : 0;
  }

  get waiting(): number {
    return this.queue.length;
  }

  get active(): number {
    return this.inFlight;
  }

  /**
   * Resolves with a release function once the request may go; call it when the request ends.
   * `onQueued` is told the queue position when the request has to wait.
   */
  acquire(signal?: AbortSignal, onQueued?: (position: number) => void): Promise<() => void> {
    if (this.closed) return Promise.reject(cancelled());
    if (signal?.aborted) return Promise.reject(cancelled());
    if (this.queue.length === 0 && this.canStartNow()) return Promise.resolve(this.start());
    if (this.queue.length >= this.options.maxQueue) {
      return Promise.reject(
        new PlatformError('QUEUE_FULL', message('error.queueFull', { max: this.options.maxQueue }), {
          notSent: true,
        }),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const index = this.queue.indexOf(waiter);
          if (index >= 0) this.queue.splice(index, 1);
          reject(cancelled());
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.queue.push(waiter);
      onQueued?.(this.queue.length);
      this.schedule();
    });
  }

  /** Refuses everything still waiting and stops the timer. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const waiter of this.queue.splice(0)) {
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.reject(cancelled());
    }
  }

  private canStartNow(): boolean {
    const concurrencyOk = this.options.maxConcurrency <= 0 || this.inFlight < this.options.maxConcurrency;
    return concurrencyOk && Date.now() >= this.nextSlotAt;
  }

  private start(): () => void {
    this.inFlight++;
    if (this.intervalMs > 0) this.nextSlotAt = Math.max(Date.now(), this.nextSlotAt) + this.intervalMs;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
      this.schedule();
    };
  }

  private schedule(): void {
    if (this.closed) return;
    while (this.queue.length > 0 && this.canStartNow()) {
      const waiter = this.queue.shift() as Waiter;
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(this.start());
    }
    if (this.queue.length === 0 || this.timer) return;
    const waitMs = this.nextSlotAt - Date.now();
    // Only the rate limit needs a timer; a concurrency wait ends when a release calls schedule().
    if (waitMs > 0 && (this.options.maxConcurrency <= 0 || this.inFlight < this.options.maxConcurrency)) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.schedule();
      }, waitMs);
    }
  }
}
