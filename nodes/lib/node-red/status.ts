import type { Node } from './inputs';
import { PlatformError } from '../util/errors';

/**
 * One place for what a node's status shows, so every node of the pack reads the same:
 * blue while requesting, yellow while queued, a ring with progress for jobs, green when done,
 * red with the error code after a failure. No text ever carries request data or secrets.
 */
export class NodeStatus {
  constructor(private readonly node: Node) {}

  requesting(inFlight: number): void {
    this.node.status({ fill: 'blue', shape: 'dot', text: inFlight > 1 ? `requesting (${inFlight})` : 'requesting' });
  }

  queued(position: number): void {
    this.node.status({ fill: 'yellow', shape: 'ring', text: `queued (${position})` });
  }

  retrying(attempt: number, reason: string): void {
    this.node.status({ fill: 'yellow', shape: 'ring', text: `retry ${attempt} after ${reason}` });
  }

  progress(text: string): void {
    this.node.status({ fill: 'blue', shape: 'ring', text });
  }

  done(text: string): void {
    this.node.status({ fill: 'green', shape: 'dot', text });
  }

  warning(text: string): void {
    this.node.status({ fill: 'yellow', shape: 'dot', text });
  }

  error(err: unknown): void {
    const text = err instanceof PlatformError ? (err.statusCode ? `${err.code} (${err.statusCode})` : err.code) : 'error';
    this.node.status({ fill: 'red', shape: 'ring', text });
  }

  clear(): void {
    this.node.status({});
  }
}
