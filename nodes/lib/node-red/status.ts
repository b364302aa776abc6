import type { Node } from './inputs';
import { PlatformError } from '../util/errors';
import { Message, message } from '../util/messages';
import { translate } from './i18n';

/**
 * One place for what a node's status shows, so every node of the pack reads the same:
 * blue while requesting, yellow while queued, a ring with progress for jobs, green when done,
 * red with the error code after a failure, each text in the runtime's language.
 * No text ever carries request data or secrets.
 */
export class NodeStatus {
  constructor(private readonly node: Node) {}

  requesting(inFlight: number): void {
    this.show('blue', 'dot', inFlight > 1 ? message('status.requestingMany', { count: inFlight }) : message('status.requesting'));
  }

  queued(position: number): void {
    this.show('yellow', 'ring', message('status.queued', { position }));
  }

  retrying(attempt: number, reason: string): void {
    this.show('yellow', 'ring', message('status.retrying', { attempt, reason }));
  }

  progress(text: Message): void {
    this.show('blue', 'ring', text);
  }

  done(text: Message | string): void {
    this.show('green', 'dot', text);
  }

  warning(text: Message): void {
    this.show('yellow', 'dot', text);
  }

  /** Red with the error code (never translated: flows switch on it) and the HTTP status, if any. */
  error(err: unknown): void {
    const text = err instanceof PlatformError ? (err.statusCode ? `${err.code} (${err.statusCode})` : err.code) : 'error';
    this.node.status({ fill: 'red', shape: 'ring', text });
  }

  /** A fixed state, such as a node that cannot work as configured. */
  show(fill: 'red' | 'green' | 'yellow' | 'blue' | 'grey', shape: 'ring' | 'dot', text: Message | string): void {
    this.node.status({ fill, shape, text: translate(text) });
  }

  clear(): void {
    this.node.status({});
  }
}
