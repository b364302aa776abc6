import type { Timers } from './async';

interface Due {
  at: number;
  /** Order of setting: timers due at the same time fire in the order they were set. */
  seq: number;
  callback: (() => void) | undefined;
}

/**
 * Many timers on one: a heap of due times under a single timer of `base`, armed for the earliest.
 * For waits counted in thousands (every job's next poll), where a timer each would cost a timer
 * object and its bookkeeping per wait. A cleared timer is dropped when it reaches the top, or when
 * the cleared ones outnumber the live ones (so memory follows the live timers).
 */
export class DueTimes implements Timers {
  private heap: Due[] = [];
  private cleared = 0;
  private seq = 0;
  private timer: unknown;
  /** When the one timer is armed for (Infinity: none). */
  private armedFor = Number.POSITIVE_INFINITY;

  constructor(private readonly base: Timers & { now(): number }) {}

  /** How many timers are set and not cleared or fired. */
  get size(): number {
    return this.heap.length - this.cleared;
  }

  /** When the earliest live timer is due (ms, on the base's clock), or undefined when none is set: no scan, the heap's top. */
  nextDueAt(): number | undefined {
    this.dropClearedTop();
    return this.heap.length > 0 ? this.heap[0].at : undefined;
  }

  setTimer(callback: () => void, ms: number): Due {
    const due: Due = { at: this.base.now() + Math.max(0, ms), seq: this.seq++, callback };
    this.push(due);
    if (due.at < this.armedFor) this.arm();
    return due;
  }

  clearTimer(timer: unknown): void {
    const due = timer as Due;
    if (!due.callback) return;
    due.callback = undefined;
    this.cleared++;
    if (this.cleared > 64 && this.cleared * 2 > this.heap.length) this.rebuild();
    if (this.size === 0) this.disarm();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = this.base.now();
    try {
      while (this.heap.length > 0 && this.heap[0].at <= now) {
        const due = this.pop();
        const callback = due.callback;
        if (!callback) {
          this.cleared--;
          continue;
        }
        due.callback = undefined;
        callback();
      }
    } finally {
      this.arm();
    }
  }

  /** Arms the one timer for the earliest live due time, if any. */
  private arm(): void {
    this.dropClearedTop();
    this.disarm();
    if (this.heap.length === 0) return;
    this.armedFor = this.heap[0].at;
    this.timer = this.base.setTimer(() => this.fire(), Math.max(0, this.armedFor - this.base.now()));
  }

  private dropClearedTop(): void {
    while (this.heap.length > 0 && !this.heap[0].callback) {
      this.pop();
      this.cleared--;
    }
  }

  private disarm(): void {
    if (this.timer !== undefined) this.base.clearTimer(this.timer);
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
  }

  private rebuild(): void {
    this.heap = this.heap.filter((due) => due.callback);
    this.cleared = 0;
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private push(due: Due): void {
    this.heap.push(due);
    let i = this.heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(due, this.heap[parent])) break;
      this.heap[i] = this.heap[parent];
      i = parent;
    }
    this.heap[i] = due;
  }

  private pop(): Due {
    const top = this.heap[0];
    const last = this.heap.pop() as Due;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
    return top;
  }

  private down(start: number): void {
    const heap = this.heap;
    const due = heap[start];
    let i = start;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && before(heap[child + 1], heap[child])) child++;
      if (!before(heap[child], due)) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = due;
  }
}

function before(a: Due, b: Due): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
