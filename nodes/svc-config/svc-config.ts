import type { ConnectionOptions } from 'node:tls';
import type { Node, NodeAPI, NodeDef } from '../lib/node-red/types';
import type { SvcConfigNode, SvcCredentials } from '../lib/node-red/config';
import { PlatformClient } from '../lib/platform/client';
import type { ClientConfig, ClientCredentials, ProxySettings } from '../lib/platform/types';
import { BYTES_PER_MB } from '../lib/platform/body';
import { SharedServices } from '../lib/node-red/shared-services';
import { readSettings } from '../lib/node-red/settings';
import type { SettingsOf } from '../lib/node-red/editor-definition';
import { translateWith } from '../lib/node-red/i18n';
import { testConnectionHandler } from '../lib/node-red/test-connection';
import { addOperationsRoutes, watchConfig } from '../lib/node-red/operations';
import { BuiltinSandboxLease, leaseBuiltinSandbox } from '../lib/node-red/builtin-sandbox';
import { Drain, drainMs } from '../lib/node-red/drain';
import { credentials as credentialTypes, defaults } from './defaults';
import { migrations } from './migrations';

type SvcConfigDef = NodeDef & SettingsOf<typeof defaults>;

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
    const settings = readSettings(def, defaults);
    this.shared = new SharedServices(RED, this, {
      redisUrl: credentials.redisUrl,
      scopeParts: [def.baseUrl, def.projectId, credentials.apiKey, credentials.clientId],
      dailyLimit: settings.nonNegative('dailyLimit'),
      cacheTtlSec: settings.nonNegative('cacheTtl'),
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
    const { nodeCloseTimeout } = RED.settings as { nodeCloseTimeout?: unknown };
    this.drain = new Drain(drainMs(settings.nonNegative('drainSeconds'), nodeCloseTimeout));
    this.on('close', (_removed: boolean, done: () => void) => {
      // The nodes using it drain first: their messages need the client and the shared state (drain.ts).
      this.drain
        .settled()
        .then(() => Promise.all([this.shared.close(), this.client.close(), lease?.release()]))
        .then(() => done(), done);
    });
  }

  function clientConfig(def: SvcConfigDef, credentials: ClientCredentials): ClientConfig {
    const settings = readSettings(def, defaults);
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
      timeoutMs: settings.positive('timeout'),
      ratePerMinute: settings.nonNegative('rateLimit'),
      // 'all': one rate for every request (what a 1.0.0 node is migrated to).
      familyRates:
        def.rateScope === 'all'
          ? undefined
          : {
              words: settings.nonNegative('rateWords'),
              routing: settings.nonNegative('rateRouting'),
              bulk: settings.nonNegative('rateBulk'),
              topics: settings.nonNegative('rateTopics'),
            },
      maxConcurrency: settings.nonNegative('maxConcurrency'),
      maxQueue: settings.nonNegative('maxQueue'),
      maxRetries: settings.nonNegative('maxRetries'),
      tokenLifetimeSec: settings.positive('tokenLifetime'),
      maxResponseBytes: Math.round(settings.positive('maxResponseSize') * BYTES_PER_MB),
      maxFileBytes: Math.round(settings.positive('maxFileSize') * BYTES_PER_MB),
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
