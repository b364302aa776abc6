import { cancelled } from './errors';
import { whenAborted } from './async';

interface Waiting {
  task: () => Promise<unknown>;
  resolve: (value: Promise<unknown>) => void;
  reject: (err: unknown) => void;
  stopListening?: () => void;
  /** Its signal aborted: skipped when its turn comes. */
  gone?: boolean;
}

/** The taken entries at the front of the queue are dropped once there are this many and they are half of it. */
const COMPACT_AFTER = 1024;

/**
 * Runs tasks at most `limit` at a time; the others wait in order of arrival, each as one entry and nothing more, until a
 * running one ends (or their signal aborts: CANCELLED). For waits counted in thousands, where the task itself would
 * hold far more while it waited (a request queued for a rate slot holds its frame, headers and callbacks).
 */
export class Turns {
  private running = 0;
  private queue: Array<Waiting | undefined> = [];
  private head = 0;

  constructor(private readonly limit: number) {}

  /** How many tasks wait for their turn. */
  get waiting(): number {
    return this.queue.length - this.head;
  }

  run<T>(signal: AbortSignal | undefined, task: () => Promise<T>): Promise<T> {
    if (this.running < this.limit && this.waiting === 0) return this.start(task);
    if (signal?.aborted) return Promise.reject(cancelled());
    return new Promise<T>((resolve, reject) => {
      const waiting: Waiting = { task, resolve: resolve as Waiting['resolve'], reject };
      if (signal) {
        waiting.stopListening = whenAborted(signal, () => {
          waiting.gone = true;
          reject(cancelled());
        });
      }
      this.queue.push(waiting);
    });
  }

  private start<T>(task: () => Promise<T>): Promise<T> {
    this.running++;
    let result: Promise<T>;
    try {
      result = task();
    } catch (err) {
      result = Promise.reject(err);
    }
    return result.finally(() => {
      this.running--;
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.limit && this.head < this.queue.length) {
      const waiting = this.queue[this.head] as Waiting;
      this.queue[this.head++] = undefined;
      if (waiting.gone) continue;
      waiting.stopListening?.();
      waiting.resolve(this.start(waiting.task));
    }
    if (this.head > 0 && this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head >= COMPACT_AFTER && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
