import type { Node, NodeAPI } from './inputs';
import type { PlatformClient } from '../platform/client';
import { PlatformError } from '../util/errors';

export interface SvcCredentials {
  clientId?: string;
  clientSecret?: string;
  apiKey?: string;
  pubsubApiKey?: string;
}

/** The running `svc-config` node as the other nodes see it. */
export interface SvcConfigNode extends Node<SvcCredentials> {
  client: PlatformClient;
  /** The deployed token URL: "Test connection" sends a stored secret only there. */
  authUrl: string;
}

/**
 * The platform client of the config node a node refers to through `server`.
 * Without one the node shows it at once and refuses messages with a clear error.
 */
export function clientFor(RED: NodeAPI, node: Node, serverId: unknown): () => PlatformClient {
  const config = typeof serverId === 'string' ? (RED.nodes.getNode(serverId) as SvcConfigNode | null) : null;
  if (!config) node.status({ fill: 'red', shape: 'ring', text: 'no svc-config' });
  return () => {
    if (!config) {
      throw new PlatformError('INVALID_INPUT', 'no svc-config node is selected: open the node and choose a platform', {
        notSent: true,
      });
    }
    return config.client;
  };
}
