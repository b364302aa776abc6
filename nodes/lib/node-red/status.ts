import type { Node } from './types';
import type { ErrorCode } from '../util/errors';
import { CatalogText, catalogText } from '../util/catalog-text';
import { translate } from './i18n';

/**
 * One place for what a node's status shows, so every node of the pack reads the same, in the runtime's language (the
 * error code itself never changes: flows switch on it). No text ever carries request data or secrets.
 */
export class NodeStatus {
  /** More than one message under way: changes are shown at most every BUSY_STATUS_MS, the last one kept. */
  private busy = false;
  private shownAt = 0;
  private pending: { fill: Fill; shape: Shape; message: CatalogText | string } | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The last status shown, shown again with the count of waiting messages when it changes. */
  private last: { fill: Fill; shape: Shape; message: CatalogText | string } | undefined;
  /** Messages held back by the rate limit or the concurrency cap, and the rate they wait for (0: none). */
  private waitingCount = 0;
  private ratePerMinute = 0;
  private waitingTimer: NodeJS.Timeout | undefined;
  /** The waiting count's text on the status shown last ('' without one). */
  private shownWaiting = '';
  /** The progress of several runs waiting to be shown (made when shown), the timer that shows it, and when it last was. */
  private runsText: (() => CatalogText) | undefined;
  private runsTimer: NodeJS.Timeout | undefined;
  private runsShownAt = 0;

  constructor(private readonly node: Node) {}

  /**
   * How many messages are under way. With several, routine changes are coalesced: a status per message would be
   * thousands a second, each sent to every open editor, for a text nobody can read. With one or none, every change shows.
   */
  underWay(count: number): void {
    this.busy = count > 1;
    if (!this.busy && this.pending) this.showPending();
  }

  /** A state of its own, such as a node that cannot work as configured: shown at once, replacing any change waiting. */
  show(fill: Fill, shape: Shape, message: CatalogText | string): void {
    if (this.pending) this.cancelPending();
    if (this.runsTimer) this.cancelRuns();
    this.render(fill, shape, message);
  }

  /** A change every message makes (requesting, done): coalesced while busy (BUSY_STATUS_MS). What needs attention is never held back. */
  private routine(fill: Fill, shape: Shape, message: CatalogText | string): void {
    // A run's outcome replaces the progress of the runs waiting to be shown.
    if (this.runsTimer) this.cancelRuns();
    if (this.busy) {
      if (this.timer) {
        this.pending = { fill, shape, message };
        return;
      }
      const waitMs = this.shownAt + BUSY_STATUS_MS - Date.now();
      if (waitMs > 0) {
        this.pending = { fill, shape, message };
        this.timer = setTimeout(() => this.showPending(), waitMs);
        return;
      }
    }
    this.render(fill, shape, message);
  }

  private showPending(): void {
    const shown = this.pending;
    this.cancelPending();
    if (shown) this.render(shown.fill, shown.shape, shown.message);
  }

  private cancelPending(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
  }

  private render(fill: Fill, shape: Shape, message: CatalogText | string): void {
    this.shownAt = Date.now();
    this.last = { fill, shape, message };
    this.shownWaiting = this.waitingText();
    const text = this.shownWaiting === '' ? translate(message) : `${translate(message)} · ${this.shownWaiting}`;
    const note = notes.get(this.node);
    // A note (shared state unavailable) turns a green status yellow: things work, but not as configured.
    this.node.status(note ? { fill: fill === 'green' ? 'yellow' : fill, shape, text: `${text} · ${note}` } : { fill, shape, text });
  }

  requesting(inFlight: number): void {
    this.routine('blue', 'dot', inFlight > 1 ? catalogText('status.requestingMany', { count: inFlight }) : catalogText('status.requesting'));
  }

  /** How many messages the rate limit or the concurrency cap holds back, shown after every status text while there are any. */
  waiting(count: number, ratePerMinute?: number): void {
    this.waitingCount = count;
    if (ratePerMinute !== undefined) this.ratePerMinute = ratePerMinute;
    if (this.waitingTimer) return;
    const waitMs = this.shownAt + WAITING_STATUS_MS - Date.now();
    if (waitMs > 0) this.waitingTimer = setTimeout(() => this.showWaiting(), waitMs);
    else this.showWaiting();
  }

  private showWaiting(): void {
    this.waitingTimer = undefined;
    // A change of the status itself waiting to be shown will carry the count; a count back where it was shows nothing new.
    if (this.pending || !this.last || this.waitingText() === this.shownWaiting) return;
    this.render(this.last.fill, this.last.shape, this.last.message);
  }

  private waitingText(): string {
    const count = this.waitingCount;
    if (count === 0) return '';
    return translate(
      this.ratePerMinute > 0 ? catalogText('status.waiting', { count, rate: this.ratePerMinute }) : catalogText('status.waitingUncapped', { count }),
    );
  }

  retrying(attempt: number, reason: string): void {
    this.show('yellow', 'ring', catalogText('status.retrying', { attempt, reason }));
  }

  /** An accepted job waiting out a platform outage: asked about again in `delayMs`. */
  outage(reason: string, delayMs: number): void {
    this.show('yellow', 'ring', catalogText('status.jobOutage', { reason, seconds: Math.ceil(delayMs / 1000) }));
  }

  progress(text: CatalogText): void {
    this.show('blue', 'ring', text);
  }

  /** The progress of several runs at once, its text made only when shown: thousands of jobs cost one status a second, not one per poll. */
  progressOfRuns(text: () => CatalogText): void {
    this.runsText = text;
    if (this.runsTimer) return;
    const waitMs = this.runsShownAt + RUNS_STATUS_MS - Date.now();
    if (waitMs <= 0) this.showRuns();
    else this.runsTimer = setTimeout(() => this.showRuns(), waitMs);
  }

  private showRuns(): void {
    const text = this.runsText;
    this.cancelRuns();
    if (!text) return;
    this.runsShownAt = Date.now();
    this.show('blue', 'ring', text());
  }

  private cancelRuns(): void {
    clearTimeout(this.runsTimer);
    this.runsTimer = undefined;
    this.runsText = undefined;
  }

  done(text: CatalogText | string): void {
    this.routine('green', 'dot', text);
  }

  warning(text: CatalogText): void {
    this.show('yellow', 'dot', text);
  }

  /** The code (with the HTTP status or a figure) and a short reason: `UNAUTHORIZED (401): credentials refused`. */
  error(failed: { readonly code?: ErrorCode; readonly statusCode?: number; readonly statusDetail?: string; readonly statusReason?: string }): void {
    if (failed.code === undefined) {
      this.show('red', 'ring', catalogText('status.failed'));
      return;
    }
    let code = failed.statusCode ? `${failed.code} (${failed.statusCode})` : failed.code;
    if (failed.statusDetail) code += ` ${failed.statusDetail}`;
    const reason = failed.statusReason === undefined ? catalogText(`status.reason.${failed.code}`) : shortened(failed.statusReason);
    this.show('red', 'ring', catalogText('status.error', { code, reason }));
  }

  clear(): void {
    this.cancelPending();
    this.cancelRuns();
    clearTimeout(this.waitingTimer);
    this.waitingTimer = undefined;
    this.waitingCount = 0;
    this.last = undefined;
    this.node.status({});
  }
}

type Fill = 'blue' | 'yellow' | 'green' | 'red' | 'grey';
type Shape = 'dot' | 'ring';

function shortened(reason: string): string {
  return reason.length <= STATUS_REASON_MAX ? reason : `${reason.slice(0, STATUS_REASON_MAX - 1).trimEnd()}…`;
}

const STATUS_REASON_MAX = 60;

const WAITING_STATUS_MS = 250;

const RUNS_STATUS_MS = 1000;

const BUSY_STATUS_MS = 100;

const notes = new WeakMap<Node, string>();

/** A note every status of `node` carries from now on (none clears it): a state of its configuration, not of one message. */
export function setStatusNote(node: Node, note: string | undefined): void {
  if (note === notes.get(node)) return;
  if (note) {
    notes.set(node, note);
    node.status({ fill: 'yellow', shape: 'ring', text: note });
  } else {
    notes.delete(node);
    node.status({ fill: 'green', shape: 'ring', text: translate(catalogText('status.sharedAvailable')) });
  }
}
