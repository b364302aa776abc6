import { Agent, Dispatcher, EnvHttpProxyAgent } from 'undici';
import type { ClientConfig } from './client';

/** The connection pool of one config node: keep-alive connections, TLS options and the proxy. */

const KEEP_ALIVE_MS = 30_000;
const PROXY_ENV = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy'];

export function createDispatcher(config: ClientConfig): Dispatcher {
  const agentOptions = {
    keepAliveTimeout: KEEP_ALIVE_MS,
    connections: config.maxConcurrency > 0 ? config.maxConcurrency : null,
    connect: config.tls ? { ...config.tls } : undefined,
    requestTls: config.tls ? { ...config.tls } : undefined,
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
