import { Clock, SYSTEM_CLOCK } from '../util/async';

interface BreakerOptions {
  /** Asks the backend once whether it responds again; must settle quickly (its own short timeout) and not reject. */
  probe: () => Promise<boolean>;
  /** Called when a probe has found the backend responding: the breaker is closed again. */
  onRecovered: () => void;
  /** The first wait before a probe; each further wait doubles, up to `maxProbeDelayMs`. */
  probeDelayMs: number;
  maxProbeDelayMs: number;
  /** The system clock unless a test moves one by hand. */
  clock?: Clock;
}

/**
 * A circuit breaker for a backend that can hang rather than fail (a Redis that is stopped or
 * overloaded keeps its connection open and replies to nothing): once `trip` is called, every caller
 * is to use its fallback at once, and callers already waiting (`race`) stop waiting, instead
 * of each waiting out its own timeout. While open, a cheap probe runs after a growing delay
 * (capped); the first one that succeeds closes the breaker.
 */
export class CircuitBreaker {
  private opened = false;
  private stopped = false;
  private probes = 0;
  private timer: unknown;
  private readonly clock: Clock;
  /** Callers waiting for the backend, each told when the breaker trips. */
  private readonly waiting = new Set<() => void>();

  constructor(private readonly options: BreakerOptions) {
    this.clock = options.clock ?? SYSTEM_CLOCK;
  }

  /** True while callers are to use their fallback. */
  get isOpen(): boolean {
    return this.opened;
  }

  /**
   * What `call` resolves with, as `{ value }`, or undefined as soon as the breaker trips while it
   * is pending (its late reply or error is then ignored); rejects as `call` does until then.
   */
  race<T>(call: Promise<T>): Promise<{ value: T } | undefined> {
    return new Promise((resolve, reject) => {
      const onTrip = () => resolve(undefined);
      this.waiting.add(onTrip);
      call.then(
        (value) => {
          this.waiting.delete(onTrip);
          resolve({ value });
        },
        (err: unknown) => {
          this.waiting.delete(onTrip);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  /** Opens the breaker (a call failed or timed out) and starts probing; nothing when it is open already. */
  trip(): void {
    if (this.opened || this.stopped) return;
    this.opened = true;
    this.probes = 0;
    for (const onTrip of this.waiting) onTrip();
    this.waiting.clear();
    this.scheduleProbe();
  }

  /** Closes the breaker (the backend responded by other means, such as a reconnection); probing stops. */
  reset(): void {
    if (!this.opened) return;
    this.opened = false;
    this.clearTimer();
  }

  /** Stops probing for good. */
  stop(): void {
    this.stopped = true;
    this.opened = false;
    this.clearTimer();
  }

  /** The wait before probe number `probes` (from 0). */
  probeDelay(probes: number): number {
    return Math.min(this.options.maxProbeDelayMs, this.options.probeDelayMs * 2 ** probes);
  }

  private scheduleProbe(): void {
    const delay = this.probeDelay(this.probes++);
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      this.options.probe().then(
        (responded) => this.probed(responded),
        () => this.probed(false),
      );
    }, delay);
  }

  private probed(responded: boolean): void {
    if (!this.opened || this.stopped || this.timer !== undefined) return;
    if (!responded) return this.scheduleProbe();
    this.opened = false;
    this.options.onRecovered();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }
}
