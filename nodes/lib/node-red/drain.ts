import type { Node } from './types';

/**
 * Drain: when a node closes (a deploy, a stop, SIGTERM), the messages it holds run on for up to its
 * config node's drain time (`drainSeconds`) before they are stopped (CANCELLED; stored jobs
 * kept or handed over). The config node closes its client and shared state only once every node using
 * it has drained: Node-RED calls the close of the nodes of a flow before that of its config nodes, all in
 * the same turn, so each node's drain is held before the config node asks for them.
 */

/** Node-RED's own `nodeCloseTimeout` unless settings.js sets one: a close taking longer is reported as an error. */
const NODE_CLOSE_TIMEOUT_MS = 15_000;
/** What a close keeps for itself after the drain (messages stopped, jobs stored, Redis closed) within nodeCloseTimeout. */
const CLOSE_MARGIN_MS = 5_000;

/** The drain of one config node: its time, and the drains of the nodes using it under way. */
export class Drain {
  private readonly held = new Set<Promise<void>>();

  /** `ms`: the drain time, already capped (`drainMs`); 0 stops every message at once. */
  constructor(readonly ms: number) {}

  /** A node closing: `drained` resolves once its messages have finished or were stopped. */
  hold(drained: Promise<void>): void {
    this.held.add(drained);
    const forget = () => this.held.delete(drained);
    drained.then(forget, forget);
  }

  /** Resolves once every drain held so far has. */
  async settled(): Promise<void> {
    await Promise.all(this.held);
  }
}

/** `seconds` as milliseconds, capped so that the drain and the close after it end within Node-RED's `nodeCloseTimeout`. */
export function drainMs(seconds: number, nodeCloseTimeoutMs: unknown): number {
  const timeout = typeof nodeCloseTimeoutMs === 'number' && nodeCloseTimeoutMs > 0 ? nodeCloseTimeoutMs : NODE_CLOSE_TIMEOUT_MS;
  return Math.round(Math.min(seconds * 1000, Math.max(0, timeout - CLOSE_MARGIN_MS)));
}

const drains = new WeakMap<Node, Drain>();

/** A node using a config node drains under its setting (`configFor` calls this). */
export function drainWith(node: Node, drain: Drain): void {
  drains.set(node, drain);
}

/** The drain a node closes under; none for a node without a config node (it stops at once). */
export function drainOf(node: Node): Drain | undefined {
  return drains.get(node);
}
