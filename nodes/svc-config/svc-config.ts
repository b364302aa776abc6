import type { ConnectionOptions } from 'node:tls';
import type { Node, NodeAPI, NodeDef } from '../lib/node-red/types';
import type { SvcConfigNode, SvcCredentials } from '../lib/node-red/config';
import { PlatformClient } from '../lib/platform/client';
import type { ClientConfig, ClientCredentials, ProxySettings } from '../lib/platform/types';
import { BYTES_PER_MB } from '../lib/platform/body';
import { SharedServices } from '../lib/node-red/shared-services';
import { nonNegativeSetting, positiveSetting } from '../lib/node-red/settings';
import { translateWith } from '../lib/node-red/i18n';
import { testConnectionHandler } from '../lib/node-red/test-connection';
import { addOperationsRoutes, watchConfig } from '../lib/node-red/operations';
import { BuiltinSandboxLease, leaseBuiltinSandbox } from '../lib/node-red/builtin-sandbox';
import { Drain, drainMs } from '../lib/node-red/drain';
import { credentials as credentialTypes, defaults } from './defaults';
import { migrations } from './migrations';

interface SvcConfigDef extends NodeDef {
  /** 'sandbox': the built-in sandbox (the addresses and credentials below are not used); else 'account'. */
  platform?: string;
  baseUrl: string;
  authUrl: string;
  sandboxUrl: string;
  audience: string;
  projectId: string;
  timeout: number | string;
  /** Requests per minute: single geocodes (`rateScope` 'family'), or every request ('all', what version 1.0.0 had). */
  rateLimit: number | string;
  /** 'family': each endpoint family has its own rate; 'all': one rate for every request (what a 1.0.0 node is migrated to). */
  rateScope?: string;
  rateWords?: number | string;
  rateRouting?: number | string;
  rateBulk?: number | string;
  rateTopics?: number | string;
  maxConcurrency: number | string;
  maxQueue?: number | string;
  maxRetries?: number | string;
  tokenLifetime?: number | string;
  /** MB: the largest JSON response read. */
  maxResponseSize?: number | string;
  /** MB: the largest result file (bulk geocoding) read. */
  maxFileSize?: number | string;
  tls?: string;
  proxy?: string;
  /** Single geocode requests per UTC day; 0 turns the guard off. */
  dailyLimit?: number | string;
  /** Seconds an identical single geocode query is served from the cache; 0 turns the cache off. */
  cacheTtl?: number | string;
  /** Seconds the nodes using it finish their messages when they close (capped below Node-RED's nodeCloseTimeout); 0 stops them at once. */
  drainSeconds?: number | string;
}

/** Node-RED's `tls-config` node, as far as this pack uses it. */
interface TlsConfigNode extends Node {
  addTLSOptions(options: ConnectionOptions): void;
}

/** Node-RED's `http proxy` node. */
interface HttpProxyNode extends Node<{ username?: string; password?: string }> {
  url: string;
  noproxy?: string[];
}

export = function register(RED: NodeAPI): void {
  function SvcConfig(this: SvcConfigNode, def: SvcConfigDef): void {
    RED.nodes.createNode(this, def);
    def = migrations.migrate(def);
    // The built-in sandbox: its own addresses and credentials in place of the node's (builtin-sandbox.ts).
    const lease: BuiltinSandboxLease | undefined = def.platform === 'sandbox' ? leaseBuiltinSandbox(RED) : undefined;
    const sandbox = lease && 'connection' in lease ? lease.connection : undefined;
    const credentials = sandbox ? { ...sandbox.credentials, redisUrl: this.credentials?.redisUrl } : (this.credentials ?? {});
    if (sandbox) {
      def = { ...def, baseUrl: sandbox.url, authUrl: sandbox.url, sandboxUrl: sandbox.url, audience: sandbox.audience, projectId: sandbox.projectId };
      this.builtinSandbox = sandbox;
    }
    this.shared = new SharedServices(RED, this, {
      redisUrl: credentials.redisUrl,
      scopeParts: [def.baseUrl, def.projectId, credentials.apiKey, credentials.clientId],
      dailyLimit: nonNegativeSetting(def.dailyLimit, defaults.dailyLimit.value),
      cacheTtlSec: nonNegativeSetting(def.cacheTtl, defaults.cacheTtl.value),
    });
    const config: ClientConfig = {
      ...clientConfig(def, credentials),
      ...(sandbox ? { name: def.name || 'built-in sandbox', tls: sandbox.tls, proxy: undefined } : {}),
      ...(lease && 'unavailable' in lease ? { sandboxUnavailable: lease.unavailable } : {}),
    };
    this.client = new PlatformClient({ ...config, pacerFor: this.shared.pacerFor });
    this.connection = {
      settings: {
        baseUrl: config.baseUrl,
        authUrl: config.authUrl,
        audience: config.audience,
        projectId: config.projectId,
        tls: def.tls ?? '',
        proxy: def.proxy ?? '',
      },
      tls: config.tls,
      proxy: config.proxy,
      credentials,
    };
    watchConfig(this);
    const settings = RED.settings as { nodeCloseTimeout?: unknown };
    this.drain = new Drain(drainMs(nonNegativeSetting(def.drainSeconds, defaults.drainSeconds.value), settings.nodeCloseTimeout));
    this.on('close', (_removed: boolean, done: () => void) => {
      // The nodes using it drain first: their messages need the client and the shared state (drain.ts).
      this.drain
        .settled()
        .then(() => Promise.all([this.shared.close(), this.client.close(), lease?.release()]))
        .then(() => done(), done);
    });
  }

  function clientConfig(def: SvcConfigDef, credentials: ClientCredentials): ClientConfig {
    return {
      // As the editor labels the config node.
      name: def.name || def.projectId || def.baseUrl || 'svc-config',
      baseUrl: def.baseUrl ?? '',
      authUrl: def.authUrl ?? '',
      sandboxUrl: def.sandboxUrl || def.baseUrl || '',
      audience: def.audience ?? '',
      projectId: def.projectId ?? '',
      credentials,
      // 0 would time every request out at once (and make every token stale at once): not a valid setting.
      timeoutMs: positiveSetting(def.timeout) ?? defaults.timeout.value,
      ratePerMinute: nonNegativeSetting(def.rateLimit, defaults.rateLimit.value),
      familyRates:
        def.rateScope === 'all'
          ? undefined
          : {
              words: nonNegativeSetting(def.rateWords, defaults.rateWords.value),
              routing: nonNegativeSetting(def.rateRouting, defaults.rateRouting.value),
              bulk: nonNegativeSetting(def.rateBulk, defaults.rateBulk.value),
              topics: nonNegativeSetting(def.rateTopics, defaults.rateTopics.value),
            },
      maxConcurrency: nonNegativeSetting(def.maxConcurrency, defaults.maxConcurrency.value),
      maxQueue: nonNegativeSetting(def.maxQueue, defaults.maxQueue.value),
      maxRetries: nonNegativeSetting(def.maxRetries, defaults.maxRetries.value),
      tokenLifetimeSec: positiveSetting(def.tokenLifetime) ?? defaults.tokenLifetime.value,
      maxResponseBytes: Math.round((positiveSetting(def.maxResponseSize) ?? defaults.maxResponseSize.value) * BYTES_PER_MB),
      maxFileBytes: Math.round((positiveSetting(def.maxFileSize) ?? defaults.maxFileSize.value) * BYTES_PER_MB),
      tls: tlsOptions(def.tls),
      proxy: proxySettings(def.proxy),
    };
  }

  function tlsOptions(id: string | undefined): ConnectionOptions | undefined {
    const tlsNode = id ? (RED.nodes.getNode(id) as TlsConfigNode | null) : null;
    if (tlsNode?.type !== 'tls-config') return undefined;
    const options: ConnectionOptions = {};
    tlsNode.addTLSOptions(options);
    return options;
  }

  function proxySettings(id: string | undefined): ProxySettings | undefined {
    const proxyNode = id ? (RED.nodes.getNode(id) as HttpProxyNode | null) : null;
    if (proxyNode?.type !== 'http proxy' || !proxyNode.url) return undefined;
    return {
      url: proxyNode.url,
      noProxy: proxyNode.noproxy,
      username: proxyNode.credentials?.username,
      password: proxyNode.credentials?.password,
    };
  }

  translateWith(RED);
  RED.nodes.registerType<SvcConfigNode, SvcConfigDef, unknown, SvcCredentials>('svc-config', SvcConfig, {
    credentials: credentialTypes,
  });

  /**
   * "Test connection": checks the token, the API key and the topics key with the values in the open
   * dialog (lib/node-red/test-connection.ts says which stored secrets a test may use).
   */
  RED.httpAdmin.post(
    '/svc-config/test',
    RED.auth.needsPermission('svc-config.write'),
    testConnectionHandler(RED, { tls: (id) => tlsOptions(id), proxy: (id) => proxySettings(id) }),
  );
  // Metrics and health of every deployed config and webhook node (docs/operations.md).
  addOperationsRoutes(RED);
};
