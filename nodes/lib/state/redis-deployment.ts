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
 * - `redis://[[user]:password@]host:port[/db]`: one Redis (no query parameters);
 * - `redis-sentinel://[[user]:password@]host:port[,host:port…]/master[?db=N&sentinelUsername=…&sentinelPassword=…]`:
 *   the master that the Sentinels name, followed through each failover;
 * - `redis-cluster://[[user]:password@]host:port[,host:port…]`: a Redis Cluster, those nodes as seeds.
 */
export interface RedisDeployment {
  kind: 'single' | 'sentinel' | 'cluster';
  /** The URL without credentials, for logs and status texts. */
  address: string;
  /** Every password of the URL (the servers' and the Sentinels'), as written and percent-decoded: masked in every text kept from Redis. */
  secrets: string[];
  /** Whether critical writes wait for a replica (RedisStore.replicated): under Sentinel, whose failover promotes one. */
  replicas: boolean;
  /** A client with `options` (common to every form), not connected until it is used or connects by itself. */
  connect(options: ClientOptions): RedisClient;
}

const SENTINEL_PORT = 26379;
const REDIS_PORT = 6379;
const SCHEMES = new Set(['redis', 'rediss', 'redis-sentinel', 'rediss-sentinel', 'redis-cluster', 'rediss-cluster']);
const SENTINEL_PARAMETERS = new Set(['db', 'sentinelUsername', 'sentinelPassword']);
/** What a scheme looks like (RFC 3986, 3.1): only then is it named in an error; nothing after it ever is. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]{0,31}$/;
const DIGITS = /^[0-9]+$/;

/**
 * Reads a shared-state URL; throws a ConfigError that names the wrong part by position ("host 2", "the password"), never
 * by what it holds: a password written without percent-encoding spills into the other parts, so no part after the
 * scheme is ever repeated. Every form is split by the URL's own delimiters (RFC 3986), the user information before the
 * last `@`, and each part percent-decoded strictly (`+` is a plus sign everywhere); a `#` is refused anywhere.
 */
export function redisDeployment(url: string): RedisDeployment {
  const schemeEnd = url.indexOf('://');
  const scheme = schemeEnd < 0 ? '' : url.slice(0, schemeEnd);
  if (!SCHEME.test(scheme)) throw new ConfigError(catalogText('error.shared.notUrl'));
  if (!SCHEMES.has(scheme.toLowerCase())) throw new ConfigError(catalogText('error.shared.notRedisUrl', { protocol: `${scheme}:` }));
  const [base, kind] = scheme.toLowerCase().split('-') as ['redis' | 'rediss', 'sentinel' | 'cluster' | undefined];
  const form = `${scheme.toLowerCase()}://`;
  const rest = url.slice(schemeEnd + 3);
  if (rest.includes('#')) throw new ConfigError(catalogText('error.shared.fragment'));
  const authorityEnd = rest.search(/[/?]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const after = authorityEnd < 0 ? '' : rest.slice(authorityEnd);
  const queryStart = after.indexOf('?');
  const path = queryStart < 0 ? after : after.slice(0, queryStart);
  const query = queryStart < 0 ? '' : after.slice(queryStart + 1);
  // An `@` in the path is a user name or password holding `/` as written (its rest read as hosts and a path); with `?`, the path is empty.
  if (path.includes('@')) throw new ConfigError(catalogText('error.shared.atAfterHosts'));
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : authority.slice(0, at);
  const colon = userinfo.indexOf(':');
  const username = decodePart(colon < 0 ? userinfo : userinfo.slice(0, colon), 'username');
  const rawPassword = colon < 0 ? '' : userinfo.slice(colon + 1);
  const password = decodePart(rawPassword, 'password');
  const auth = { ...(username ? { username } : {}), ...(password ? { password } : {}) };
  const hostList = authority.slice(at + 1).split(',');
  const defaultPort = kind === 'sentinel' ? SENTINEL_PORT : REDIS_PORT;
  const example = kind === undefined ? `${form}host:port` : `${form}host:port,host:port…`;
  const hosts = hostList.map((host, index) => hostAndPort(host, index + 1, defaultPort, example));
  const servers = hosts.map(({ host, port }) => ({ host, port }));
  const secrets = secretsOf([rawPassword, password]);
  const tls = base === 'rediss';
  if (kind === undefined) {
    if (hosts.length > 1) throw new ConfigError(catalogText('error.shared.oneHost'));
    if (query !== '') throw new ConfigError(catalogText('error.shared.noParameters'));
    const db = path === '' || path === '/' ? 0 : Number(DIGITS.test(path.slice(1)) ? path.slice(1) : NaN);
    if (!Number.isSafeInteger(db)) throw new ConfigError(catalogText('error.shared.badDbPath'));
    const [{ host, port, portGiven }] = hosts;
    return {
      kind: 'single',
      address: `${form}${showHost(host, portGiven ? port : undefined)}`,
      secrets,
      replicas: false,
      connect: (options) => new Redis({ ...options, ...auth, host, port, db, ...(tls ? { tls: {} } : {}) }),
    };
  }
  const address = `${form}${hosts.map(({ host, port }) => showHost(host, port)).join(',')}`;
  if (kind === 'cluster') {
    if ((path !== '' && path !== '/') || queryStart >= 0) throw new ConfigError(catalogText('error.shared.clusterExtra'));
    return {
      kind: 'cluster',
      address,
      secrets,
      replicas: false,
      connect: ({ retryStrategy, enableOfflineQueue, lazyConnect, ...options }) =>
        new Cluster(servers, {
          enableOfflineQueue,
          lazyConnect,
          clusterRetryStrategy: retryStrategy,
          redisOptions: { ...options, ...auth, ...(tls ? { tls: {} } : {}) },
        }),
    };
  }
  const name = decodePart(path.slice(1), 'masterName');
  if (!name) throw new ConfigError(catalogText('error.shared.noMasterName'));
  const parameters = sentinelParameters(query);
  const db = Number(DIGITS.test(parameters.db?.value ?? '0') ? (parameters.db?.value ?? '0') : NaN);
  if (!Number.isSafeInteger(db)) throw new ConfigError(catalogText('error.shared.badDb'));
  const sentinelUsername = parameters.sentinelUsername?.value;
  const sentinelPassword = parameters.sentinelPassword?.value;
  return {
    kind: 'sentinel',
    address: `${address}/${encodeURIComponent(name)}`,
    secrets: [...secrets, ...secretsOf([parameters.sentinelPassword?.raw ?? '', sentinelPassword ?? ''])],
    replicas: true,
    connect: (options) =>
      new Redis({
        ...options,
        ...auth,
        sentinels: servers,
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

/** The parts of a URL an error names (`error.shared.part.*`): by their place, never by what they hold. */
type Part = 'username' | 'password' | 'masterName' | 'db' | 'sentinelUsername' | 'sentinelPassword';

/** A part of a URL percent-decoded (`%XX`, UTF-8; `+` stays a plus sign); a ConfigError naming the part when it is not valid percent-encoding. */
function decodePart(part: string, name: Part): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new ConfigError(catalogText('error.shared.badEncoding', { part: catalogText(`error.shared.part.${name}`) }));
  }
}

/** A Sentinel URL's query: each parameter (one it takes, at most once) as written and percent-decoded. */
function sentinelParameters(query: string): Partial<Record<Part, { raw: string; value: string }>> {
  const parameters: Partial<Record<Part, { raw: string; value: string }>> = {};
  const pieces = query.split('&').filter((piece) => piece !== '');
  pieces.forEach((piece, index) => {
    const equals = piece.indexOf('=');
    const name = equals < 0 ? piece : piece.slice(0, equals);
    if (!SENTINEL_PARAMETERS.has(name)) throw new ConfigError(catalogText('error.shared.unknownParameter', { n: index + 1 }));
    const part = name as Part;
    if (parameters[part]) throw new ConfigError(catalogText('error.shared.repeatedParameter', { parameter: name }));
    const raw = equals < 0 ? '' : piece.slice(equals + 1);
    parameters[part] = { raw, value: decodePart(raw, part) };
  });
  return parameters;
}

/** Host `n` of a URL's list (`host`, `host:port`, `[v6]:port`), its port the form's default when left out. */
function hostAndPort(given: string, n: number, defaultPort: number, example: string): { host: string; port: number; portGiven: boolean } {
  let parsed: URL | undefined;
  try {
    parsed = new URL(`redis://${given}`);
  } catch {
    parsed = undefined;
  }
  if (!parsed?.hostname || parsed.pathname || parsed.username || parsed.password || parsed.search) {
    throw new ConfigError(catalogText('error.shared.badHost', { n, example }));
  }
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: parsed.port ? Number(parsed.port) : defaultPort, portGiven: parsed.port !== '' };
}

function showHost(host: string, port?: number): string {
  const shown = host.includes(':') ? `[${host}]` : host;
  return port === undefined ? shown : `${shown}:${port}`;
}

/** A secret as written in the URL and percent-decoded (as it is sent): both are masked; none when empty. */
function secretsOf(forms: string[]): string[] {
  return [...new Set(forms.filter((form) => form !== ''))];
}
