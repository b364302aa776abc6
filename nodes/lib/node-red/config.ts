import type { Node, NodeAPI } from './inputs';
import type { PlatformClient } from '../platform/client';
import { PlatformError } from '../util/errors';
import type { SharedServices } from './shared';

export interface SvcCredentials {
  clientId?: string;
  clientSecret?: string;
  apiKey?: string;
  pubsubApiKey?: string;
  /** `redis://…` or `rediss://…` (or `${REDIS_URL}`): state shared by every instance running the same flows. */
  redisUrl?: string;
}

/** The running `svc-config` node as the other nodes see it. */
export interface SvcConfigNode extends Node<SvcCredentials> {
  client: PlatformClient;
  /** The deployed token URL: "Test connection" sends a stored secret only there. */
  authUrl: string;
  shared: SharedServices;
}

/**
 * The config node a node refers to through `server`, registered with it for the node's life.
 * Without one the node shows it at once and refuses messages with a clear error.
 */
export function configFor(RED: NodeAPI, node: Node, serverId: unknown): () => SvcConfigNode {
  const config = typeof serverId === 'string' ? (RED.nodes.getNode(serverId) as SvcConfigNode | null) : null;
  if (config) config.shared.register(node);
  else node.status({ fill: 'red', shape: 'ring', text: 'no svc-config' });
  return () => {
    if (!config) {
      throw new PlatformError('INVALID_INPUT', 'no svc-config node is selected: open the node and choose a platform', {
        notSent: true,
      });
    }
    return config;
  };
}

/** The platform client of the config node a node refers to through `server` (see `configFor`). */
export function clientFor(RED: NodeAPI, node: Node, serverId: unknown): () => PlatformClient {
  const config = configFor(RED, node, serverId);
  return () => config().client;
}
