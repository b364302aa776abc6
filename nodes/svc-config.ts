import type { ConnectionOptions } from 'node:tls';
import type { Node, NodeAPI, NodeDef } from './lib/node-red/types';
import type { SvcConfigNode, SvcCredentials } from './lib/node-red/config';
import { PlatformClient } from './lib/platform/client';
import type { ClientConfig, ClientCredentials, ProxySettings } from './lib/platform/types';
import { BYTES_PER_MB } from './lib/platform/body';
import { SharedServices } from './lib/node-red/shared-services';
import { nonNegativeSetting, positiveSetting } from './lib/node-red/settings';
import { translateWith } from './lib/node-red/i18n';
import { testConnectionHandler } from './lib/node-red/test-connection';
import { migrated } from './lib/node-red/migrations';

interface SvcConfigDef extends NodeDef {
  baseUrl: string;
  authUrl: string;
  sandboxUrl: string;
  audience: string;
  projectId: string;
  timeout: number | string;
  /** Requests per minute: single geocodes (`rateScope` 'family'), or every request ('all', as 1.0.0). */
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

const DEFAULTS = {
  timeout: 30_000,
  // The platform's recommended rate for single geocode (spec: 80 requests per minute); the other families are off.
  rateLimit: 80,
  familyRate: 0,
  maxConcurrency: 8,
  maxQueue: 1000,
  maxRetries: 3,
  tokenLifetime: 3600,
  // Geocode, route and isoline responses run to some hundred KB; bulk result files to some MB per 1000 rows.
  maxResponseSize: 5,
  maxFileSize: 100,
  // The platform's daily limit for single geocode (spec: 50,000 requests per day).
  dailyLimit: 50_000,
  cacheTtl: 0,
};

export = function register(RED: NodeAPI): void {
  function SvcConfig(this: SvcConfigNode, def: SvcConfigDef): void {
    RED.nodes.createNode(this, def);
    def = migrated(def);
    const credentials = this.credentials ?? {};
    this.shared = new SharedServices(RED, this, {
      redisUrl: credentials.redisUrl,
      scopeParts: [def.baseUrl, def.projectId, credentials.apiKey, credentials.clientId],
      dailyLimit: nonNegativeSetting(def.dailyLimit, DEFAULTS.dailyLimit),
      cacheTtlSec: nonNegativeSetting(def.cacheTtl, DEFAULTS.cacheTtl),
    });
    const config = clientConfig(def, credentials);
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
    this.on('close', (_removed: boolean, done: () => void) => {
      Promise.all([this.shared.close(), this.client.close()]).then(() => done(), done);
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
      timeoutMs: positiveSetting(def.timeout) ?? DEFAULTS.timeout,
      ratePerMinute: nonNegativeSetting(def.rateLimit, DEFAULTS.rateLimit),
      familyRates:
        def.rateScope === 'all'
          ? undefined
          : {
              words: nonNegativeSetting(def.rateWords, DEFAULTS.familyRate),
              routing: nonNegativeSetting(def.rateRouting, DEFAULTS.familyRate),
              bulk: nonNegativeSetting(def.rateBulk, DEFAULTS.familyRate),
              topics: nonNegativeSetting(def.rateTopics, DEFAULTS.familyRate),
            },
      maxConcurrency: nonNegativeSetting(def.maxConcurrency, DEFAULTS.maxConcurrency),
      maxQueue: nonNegativeSetting(def.maxQueue, DEFAULTS.maxQueue),
      maxRetries: nonNegativeSetting(def.maxRetries, DEFAULTS.maxRetries),
      tokenLifetimeSec: positiveSetting(def.tokenLifetime) ?? DEFAULTS.tokenLifetime,
      maxResponseBytes: Math.round((positiveSetting(def.maxResponseSize) ?? DEFAULTS.maxResponseSize) * BYTES_PER_MB),
      maxFileBytes: Math.round((positiveSetting(def.maxFileSize) ?? DEFAULTS.maxFileSize) * BYTES_PER_MB),
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
    credentials: {
      clientId: { type: 'text' },
      clientSecret: { type: 'password' },
      apiKey: { type: 'password' },
      pubsubApiKey: { type: 'password' },
      redisUrl: { type: 'password' },
    },
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
};
