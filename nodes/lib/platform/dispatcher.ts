import { Agent, Dispatcher, EnvHttpProxyAgent, Pool } from 'undici';
import type { ClientConfig } from './types';
import { describeCause } from '../util/errors';

/** The connection pool of one config node: keep-alive connections, TLS options and the proxy. */

const KEEP_ALIVE_MS = 30_000;
const PROXY_ENV = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy'];
/** undici's own limit on opening a connection; a short per-attempt timeout shortens it (see connectTimeoutMs). */
const MAX_CONNECT_MS = 10_000;

/**
 * The code of a failed proxy tunnel, as undici names it since it fails the request itself
 * (nodejs/undici#3897): a NETWORK error, nothing sent.
 */
export const PROXY_TUNNEL_CODE = 'UND_ERR_PRX_CONN';

/**
 * Opening a connection (TCP, TLS, and the proxy's response to CONNECT) may take half the per-attempt
 * timeout: a host or proxy that never responds is a NETWORK error (nothing sent, so retried by every
 * policy), not a TIMEOUT of the whole attempt.
 */
function connectTimeoutMs(timeoutMs: number): number {
  return Math.max(1, Math.min(MAX_CONNECT_MS, Math.floor(timeoutMs / 2)));
}

export function createDispatcher(config: ClientConfig): Dispatcher {
  const connectMs = connectTimeoutMs(config.timeoutMs);
  const agentOptions = {
    keepAliveTimeout: KEEP_ALIVE_MS,
    // The client's own timer ends every attempt at its timeout (client.ts, send): undici's timers for
    // the headers and between body chunks, set and refreshed per request, would only ever fire later.
    headersTimeout: 0,
    bodyTimeout: 0,
    connections: config.maxConcurrency > 0 ? config.maxConcurrency : null,
    connect: { ...config.tls, timeout: connectMs },
    requestTls: config.tls ? { ...config.tls } : undefined,
    // The connection to the proxy itself, likewise.
    proxyTls: { timeout: connectMs },
    clientFactory: (origin: URL, options: object) => new ProxyTunnelPool(origin, options, connectMs),
  };
  if (!config.proxy) {
    // EnvHttpProxyAgent reads HTTP_PROXY/HTTPS_PROXY/NO_PROXY itself when no proxy node is set; without
    // them a plain Agent saves it checking the environment on every request.
    return PROXY_ENV.some((name) => process.env[name]) ? new EnvHttpProxyAgent(agentOptions) : new Agent(agentOptions);
  }
  const proxyUrl = new URL(config.proxy.url);
  if (config.proxy.username) {
    proxyUrl.username = encodeURIComponent(config.proxy.username);
    proxyUrl.password = encodeURIComponent(config.proxy.password ?? '');
  }
  return new EnvHttpProxyAgent({
    ...agentOptions,
    httpProxy: proxyUrl.href,
    httpsProxy: proxyUrl.href,
    noProxy: (config.proxy.noProxy ?? []).join(','),
  });
}

type TunnelOptions = Omit<Dispatcher.ConnectOptions, 'origin'>;

/** Codes undici's client takes for a dropped connection worth connecting again for (client.js onError): the loop. */
const LOOPING_CODES = new Set(['UND_ERR_SOCKET', 'UND_ERR_INFO', '']);

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/**
 * The connections to the proxy, whose CONNECT requests open the tunnels. undici 7 passes a tunnel
 * that the proxy closes before responding on as a "socket" error, which its client takes for a
 * dropped connection and reacts by connecting again at once, without end (tens of thousands of
 * connections a second, and the request never settles). Here a CONNECT the proxy drops, or does
 * not respond to within the connect timeout, becomes an error of its own code, which fails the requests
 * waiting for it: one NETWORK error and one or two connections per attempt.
 */
class ProxyTunnelPool extends Pool {
  constructor(
    origin: URL,
    options: object,
    private readonly tunnelTimeoutMs: number,
  ) {
    super(origin, options);
  }

  override connect(options: TunnelOptions): Promise<Dispatcher.ConnectData>;
  override connect(options: TunnelOptions, callback: (err: Error | null, data: Dispatcher.ConnectData) => void): void;
  override connect(options: TunnelOptions, callback?: (err: Error | null, data: Dispatcher.ConnectData) => void): Promise<Dispatcher.ConnectData> | void {
    const tunnel = this.openTunnel(options);
    if (!callback) return tunnel;
    tunnel.then(
      (data) => callback(null, data),
      (err: Error) => callback(err, undefined as unknown as Dispatcher.ConnectData),
    );
  }

  private openTunnel(options: TunnelOptions): Promise<Dispatcher.ConnectData> {
    const callerSignal = options.signal instanceof AbortSignal ? options.signal : undefined;
    const timeout = new AbortController();
    const pending = super.connect({ ...options, signal: callerSignal ? AbortSignal.any([callerSignal, timeout.signal]) : timeout.signal });
    return new Promise((resolve, reject) => {
      const fail = (err: unknown, why: string) =>
        reject(Object.assign(new Error(why, { cause: err }), { name: 'ProxyConnectionError', code: PROXY_TUNNEL_CODE }));
      // As for requests, undici applies the abort only once the CONNECT is written: the timer settles it either way.
      const timer = setTimeout(() => {
        timeout.abort();
        fail(undefined, `the proxy did not respond to CONNECT within ${this.tunnelTimeoutMs} ms`);
        pending.then(
          (late) => late.socket.destroy(),
          () => undefined,
        );
      }, this.tunnelTimeoutMs);
      pending.then(
        (data) => {
          clearTimeout(timer);
          resolve(data);
        },
        (err: unknown) => {
          clearTimeout(timer);
          // A refused or unreachable proxy already fails the waiting request, with its own code (ECONNREFUSED …).
          if (callerSignal?.aborted || !LOOPING_CODES.has(codeOf(err))) reject(err);
          else fail(err, `the proxy closed the connection without responding to CONNECT (${describeCause(err)})`);
        },
      );
    });
  }
}
