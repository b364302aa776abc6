import Redis, { Cluster, type RedisOptions } from 'ioredis';
import { ConfigError } from '../util/errors';
import { catalogText } from '../util/catalog-text';

/** A connection to shared state: one Redis (or one followed through Sentinel), or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** What every form of connection is made with (the parts a URL decides are added per form). */
export interface ClientOptions extends Omit<RedisOptions, 'retryStrategy' | 'enableOfflineQueue'> {
  /** The wait before reconnection attempt `attempt`; null: no more attempts. */
  retryStrategy: (attempt: number) => number | null;
  enableOfflineQueue: boolean;
}

/**
 * What the shared-state URL names, in one of three forms (`rediss…` for TLS to every server):
 * - `redis://[[user]:password@]host:port[/db]`: one Redis, as ioredis reads the URL;
 * - `redis-sentinel://[[user]:password@]host:port[,host:port…]/master[?db=N&sentinelUsername=…&sentinelPassword=…]`:
 *   the master that the Sentinels at those addresses name, followed through each failover;
 * - `redis-cluster://[[user]:password@]host:port[,host:port…]`: a Redis Cluster, those nodes as seeds.
 * The user and password are the Redis servers' (the master's and replicas', or every cluster node's).
 */
export interface RedisDeployment {
  kind: 'single' | 'sentinel' | 'cluster';
  /** The URL without credentials, for logs and status texts. */
  address: string;
  /** Every secret of the URL, as given and percent-decoded: masked in every text kept from Redis. */
  secrets: string[];
  /**
   * Whether a write whose loss would deliver a job twice or let a replay through waits for a replica
   * (RedisStore.replicated): under Sentinel, whose failover promotes one.
   */
  replicas: boolean;
  /** A client with `options` (common to every form), not connected until it is used or connects by itself. */
  connect(options: ClientOptions): RedisClient;
}

const SENTINEL_PORT = 26379;
const REDIS_PORT = 6379;
const SENTINEL_PARAMETERS = new Set(['db', 'sentinelUsername', 'sentinelPassword']);
const SEVERAL = /^(rediss?)-(sentinel|cluster):\/\/(?:([^@/?#]*)@)?([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/;

/** Reads a shared-state URL; throws a ConfigError that says which form it expected. */
export function redisDeployment(url: string): RedisDeployment {
  const several = SEVERAL.exec(url);
  if (several) return severalServers(several);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(catalogText('error.shared.notUrl'));
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ConfigError(catalogText('error.shared.notRedisUrl', { protocol: parsed.protocol }));
  }
  return {
    kind: 'single',
    address: `${parsed.protocol}//${parsed.host}`,
    secrets: decoded(parsed.password),
    replicas: false,
    connect: (options) => new Redis(url, options),
  };
}

function severalServers([, scheme, kind, userinfo, hostList, path, query]: RegExpExecArray): RedisDeployment {
  const tls = scheme === 'rediss';
  const form = `${scheme}-${kind}://`;
  const [username, password] = credentials(userinfo);
  const hosts = hostList.split(',').map((host) => hostAndPort(host, kind === 'sentinel' ? SENTINEL_PORT : REDIS_PORT, form));
  const parameters = new URLSearchParams(query ?? '');
  const address = `${form}${hosts.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`).join(',')}`;
  const auth = { ...(username ? { username: decode(username) } : {}), ...(password ? { password: decode(password) } : {}) };
  if (kind === 'cluster') {
    if (path || query) throw new ConfigError(catalogText('error.shared.clusterExtra'));
    return {
      kind: 'cluster',
      address,
      secrets: decoded(password),
      replicas: false,
      connect: ({ retryStrategy, enableOfflineQueue, lazyConnect, ...options }) =>
        new Cluster(hosts, {
          enableOfflineQueue,
          lazyConnect,
          clusterRetryStrategy: retryStrategy,
          redisOptions: { ...options, ...auth, ...(tls ? { tls: {} } : {}) },
        }),
    };
  }
  const name = decode(path ?? '');
  if (!name) throw new ConfigError(catalogText('error.shared.noMasterName'));
  for (const parameter of parameters.keys()) {
    if (!SENTINEL_PARAMETERS.has(parameter)) throw new ConfigError(catalogText('error.shared.unknownParameter', { parameter }));
  }
  const db = Number(parameters.get('db') ?? '0');
  if (!Number.isInteger(db) || db < 0) throw new ConfigError(catalogText('error.shared.badDb', { db: parameters.get('db') ?? '' }));
  const sentinelUsername = parameters.get('sentinelUsername') ?? undefined;
  const sentinelPassword = parameters.get('sentinelPassword') ?? undefined;
  return {
    kind: 'sentinel',
    address: `${address}/${encodeURIComponent(name)}`,
    secrets: [...decoded(password), ...decoded(sentinelPassword)],
    replicas: true,
    connect: (options) =>
      new Redis({
        ...options,
        ...auth,
        sentinels: hosts,
        name,
        db,
        sentinelUsername,
        sentinelPassword,
        // Follows a failover as soon as a Sentinel announces it (+switch-master), not when the old master is demoted.
        failoverDetector: true,
        sentinelRetryStrategy: options.retryStrategy,
        sentinelCommandTimeout: options.connectTimeout,
        ...(tls ? { tls: {}, enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
      }),
  };
}

/** The user and password of `user:password`, as given (percent-encoded), either possibly empty. */
function credentials(userinfo: string | undefined): [string, string] {
  if (!userinfo) return ['', ''];
  const colon = userinfo.indexOf(':');
  return colon < 0 ? [userinfo, ''] : [userinfo.slice(0, colon), userinfo.slice(colon + 1)];
}

/** A part of a URL percent-decoded, or as given when it is not valid percent-encoding. */
function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function hostAndPort(given: string, defaultPort: number, form: string): { host: string; port: number } {
  let parsed: URL;
  try {
    parsed = new URL(`redis://${given}`);
  } catch {
    throw new ConfigError(catalogText('error.shared.badHost', { host: given, form }));
  }
  if (!parsed.hostname || parsed.pathname || parsed.username || parsed.password) {
    throw new ConfigError(catalogText('error.shared.badHost', { host: given, form }));
  }
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: parsed.port ? Number(parsed.port) : defaultPort };
}

/** A secret as given and percent-decoded (as ioredis sends it); none when empty. */
function decoded(secret: string | undefined): string[] {
  return secret ? [...new Set([secret, decode(secret)])] : [];
}
