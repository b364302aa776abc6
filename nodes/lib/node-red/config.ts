import type { Node, NodeAPI } from './types';
import type { PlatformClient } from '../platform/client';
import type { ConnectionOptions } from 'node:tls';
import type { AuthScheme, ClientCredentials, ProxySettings } from '../platform/types';
import { configInvalid, describeProblem } from '../platform/config-check';
import { InputError } from '../util/errors';
import { catalogText } from '../util/catalog-text';
import { NodeStatus } from './status';
import type { SharedServices } from './shared-services';
import type { BuiltinSandboxConnection } from './builtin-sandbox';
import { Drain, drainWith } from './drain';

/** The config node's credentials: the platform client's, and the Redis URL of the shared state. */
export interface SvcCredentials extends ClientCredentials {
  /** `redis://…` or `rediss://…` (or `${REDIS_URL}`): state shared by every instance running the same flows. */
  redisUrl?: string;
}

/** The running `svc-config` node as the other nodes see it. */
export interface SvcConfigNode extends Node<SvcCredentials> {
  client: PlatformClient;
  /** What "Test connection" compares before it uses a stored secret, and the TLS and proxy it then uses. */
  connection: DeployedConnection;
  shared: SharedServices;
  /** With platform 'sandbox' served by this Node-RED: the sandbox's connection (its webhook secret, this Node-RED's own URLs). */
  builtinSandbox?: BuiltinSandboxConnection;
  /** How long the nodes using it finish their messages when they close (drain.ts). */
  drain: Drain;
}

/** The settings of a config node a test depends on, as in flow JSON (`tls` and `proxy` are node ids, '' for none). */
export interface ConnectionSettings {
  baseUrl: string;
  authUrl: string;
  audience: string;
  projectId: string;
  tls: string;
  proxy: string;
}

/** What a running config node keeps of its deployment, so that a test may use its stored secrets the way it does. */
export interface DeployedConnection {
  settings: ConnectionSettings;
  tls?: ConnectionOptions;
  proxy?: ProxySettings;
  credentials: ClientCredentials;
}

/**
 * The config node a node refers to through `server`, for one endpoint family; the node registers
 * with it (its status then tells when shared state is unavailable, and it drains under the config
 * node's drain time when it closes). Checked when the flow starts:
 * without a config node, or with one that cannot serve the family (an address that is not an http(s)
 * URL, a credential the family needs left empty), the node shows why in a red status at once, and each
 * message fails before any request, never retried: a config node that cannot serve the family is a
 * ConfigError (CONFIG_INVALID); no config node at all stays an InputError (INVALID_INPUT), the code
 * 1.0.0 gave it and flows switch on (CONTRIBUTING, "Why a reported failure is what it is"). Call the
 * returned function first thing for each message.
 */
export function configFor(RED: NodeAPI, node: Node, serverId: unknown, family: AuthScheme): () => SvcConfigNode {
  const config = typeof serverId === 'string' ? (RED.nodes.getNode(serverId) as SvcConfigNode | null) : null;
  const problems = config?.client.problemsFor(family) ?? [];
  config?.shared.register(node);
  if (config) drainWith(node, config.drain);
  const status = new NodeStatus(node);
  if (!config) status.show('red', 'ring', catalogText('status.noConfig'));
  else if (problems.length > 0) status.show('red', 'ring', catalogText('status.configInvalid', { problem: describeProblem(problems[0]) }));
  return () => {
    if (!config) {
      throw new InputError(catalogText('error.noConfig'));
    }
    if (problems.length > 0) throw configInvalid(problems);
    return config;
  };
}

/** The platform client of the config node a node refers to through `server` (see `configFor`). */
export function clientFor(RED: NodeAPI, node: Node, serverId: unknown, family: AuthScheme): () => PlatformClient {
  const config = configFor(RED, node, serverId, family);
  return () => config().client;
}
