import type { Node } from './types';
import type { ErrorCode } from '../util/errors';
import { CatalogText, catalogText } from '../util/catalog-text';
import { translate } from './i18n';

/**
 * One place for what a node's status shows, so every node of the pack reads the same:
 * blue while requesting, yellow while queued, a ring with progress for jobs, green when done,
 * red with the error code after a failure, each text in the runtime's language (the error code
 * itself never changes: flows switch on it). No text ever carries request data or secrets.
 */
export class NodeStatus {
  constructor(private readonly node: Node) {}

  /** A state of its own, such as a node that cannot work as configured. */
  show(fill: 'blue' | 'yellow' | 'green' | 'red' | 'grey', shape: 'dot' | 'ring', message: CatalogText | string): void {
    const text = translate(message);
    const note = notes.get(this.node);
    // A note (shared state unavailable) turns a green status yellow: things work, but not as configured.
    this.node.status(note ? { fill: fill === 'green' ? 'yellow' : fill, shape, text: `${text} · ${note}` } : { fill, shape, text });
  }

  requesting(inFlight: number): void {
    this.show('blue', 'dot', inFlight > 1 ? catalogText('status.requestingMany', { count: inFlight }) : catalogText('status.requesting'));
  }

  queued(position: number): void {
    this.show('yellow', 'ring', catalogText('status.queued', { position }));
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

  done(text: CatalogText | string): void {
    this.show('green', 'dot', text);
  }

  warning(text: CatalogText): void {
    this.show('yellow', 'dot', text);
  }

  /**
   * The code (with the HTTP status or a figure such as `2/2`) and a short reason: `UNAUTHORIZED (401): credentials refused`.
   * `failed` is a reported failure (failure.ts); the status needs no more of it than these.
   */
  error(failed: { readonly code?: ErrorCode; readonly statusCode?: number; readonly statusDetail?: string }): void {
    if (failed.code === undefined) {
      this.show('red', 'ring', catalogText('status.failed'));
      return;
    }
    let code = failed.statusCode ? `${failed.code} (${failed.statusCode})` : failed.code;
    if (failed.statusDetail) code += ` ${failed.statusDetail}`;
    this.show('red', 'ring', catalogText('status.error', { code, reason: catalogText(`status.reason.${failed.code}`) }));
  }

  clear(): void {
    this.node.status({});
  }
}

const notes = new WeakMap<Node, string>();

/**
 * A note every status of `node` carries from now on (none clears it): a state of the node's
 * configuration rather than of one message, such as shared state being unavailable.
 */
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
