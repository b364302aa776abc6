import type { Node, NodeAPI } from './inputs';
import type { AuthScheme, ClientCredentials, PlatformClient } from '../platform/client';
import { ConfigError, describeProblem } from '../platform/config-check';
import { PlatformError } from '../util/errors';
import { message } from '../util/messages';
import { NodeStatus } from './status';

/** The running `svc-config` node as the other nodes see it. */
export interface SvcConfigNode extends Node<ClientCredentials> {
  client: PlatformClient;
  /** The deployed token URL: "Test connection" sends a stored secret only there. */
  authUrl: string;
}

/**
 * The platform client of the config node a node refers to through `server`, for one endpoint family.
 * Checked when the flow starts: without a config node, or with one that cannot serve the family (an
 * address that is not an http(s) URL, a credential the family needs left empty), the node shows why
 * in a red status at once, and each message fails before any request (CONFIG_INVALID, not retried).
 * Call the returned function first thing for each message.
 */
export function clientFor(RED: NodeAPI, node: Node, serverId: unknown, family: AuthScheme): () => PlatformClient {
  const config = typeof serverId === 'string' ? (RED.nodes.getNode(serverId) as SvcConfigNode | null) : null;
  const problems = config?.client.problemsFor(family) ?? [];
  const status = new NodeStatus(node);
  if (!config) status.show('red', 'ring', message('status.noConfig'));
  else if (problems.length > 0) status.show('red', 'ring', message('status.configInvalid', { problem: describeProblem(problems[0]) }));
  return () => {
    if (!config) {
      throw new PlatformError('INVALID_INPUT', message('error.noConfig'), {
        notSent: true,
      });
    }
    if (problems.length > 0) throw new ConfigError(problems);
    return config.client;
  };
}
