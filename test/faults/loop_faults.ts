import net from 'node:net';
import should from 'should';
import { CONFIG_ID, Fields, configNode, expectError, helper, nodeModule, sandboxCredentials, useSandbox } from '../support/harness';
import { setTimeout as sleep } from 'node:timers/promises';
import { SharedState } from '../../nodes/lib/state/shared-state';
import { english } from '../support/english';
import { freePort } from '../support/node-red-process';

/**
 * Issue 20, point 5: no failure loop runs away. Every retry path has a delay and a cap: the client's
 * retries (maxRetries, backoff; the token fetch likewise: platform_client_spec), the job poller (a
 * growing interval, Max wait), Redis reconnections (a growing delay up to 2 s) and, here, the
 * connections through a proxy.
 *
 * A misbehaving HTTP proxy between Node-RED and the platform. A real local TCP
 * server plays the proxy and counts the connections it gets; svc-geocode (an API key) and svc-words
 * (a token first) send one message each through it. Whatever the proxy does (closes the connection at
 * once, reads the CONNECT and closes without a response, never responds, is not there at all) the
 * message ends in one NETWORK error within the attempts the config node allows, over a handful of
 * connections, and no connection is opened after the error. (On 1.0.0 a proxy that closed made the
 * client reconnect in a tight loop, tens of thousands of connections, and no error ever came; one that
 * never responded held the message past every timeout.) A proxy that opens the tunnel and then passes
 * nothing on is a TIMEOUT: the request was sent, and a slow platform looks the same.
 */

const PROXY_NODE = require.resolve('@node-red/nodes/core/network/06-httpproxy.js');
const TIMEOUT_MS = 1000;
const MAX_RETRIES = 2;
const ATTEMPTS = MAX_RETRIES + 1;
/** Every attempt up to its timeout, and the backoff between attempts (at most 250 ms, then 500 ms). */
const ERROR_WITHIN_MS = ATTEMPTS * TIMEOUT_MS + 750 + 1000;
/**
 * Connections the proxy may see: one per attempt, and one more where undici opens a spare tunnel as an
 * attempt is cut off at its timeout (seen with a proxy that never responds, or passes nothing on).
 */
const MAX_CONNECTIONS = 2 * ATTEMPTS;
/** After the error: any connection now would be a loop that outlives its message. */
const QUIET_MS = 1000;

type ProxyBehaviour = 'close at once' | 'close after CONNECT' | 'never respond' | 'open the tunnel, pass nothing on';

interface FakeProxy {
  url: string;
  connections: () => number;
  close: () => Promise<void>;
}

async function startFakeProxy(behaviour: ProxyBehaviour): Promise<FakeProxy> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    if (behaviour === 'close at once') return void socket.destroy();
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      if (behaviour === 'close after CONNECT') socket.end();
      else if (behaviour === 'open the tunnel, pass nothing on' && head.startsWith('CONNECT ')) {
        head = '';
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A proxy address where nothing listens. */
async function refusingProxy(): Promise<FakeProxy> {
  return { url: `http://127.0.0.1:${await freePort()}`, connections: () => 0, close: async () => undefined };
}

const NODES: Array<{ type: string; msg: Fields }> = [
  { type: 'svc-geocode', msg: { payload: '12 Main Street, Sandbox City' } },
  { type: 'svc-words', msg: { payload: 'index.home.raft' } },
];

const CASES: Array<{ behaviour: ProxyBehaviour | 'refuse'; code: string; message: RegExp }> = [
  { behaviour: 'close at once', code: 'NETWORK', message: /proxy closed the connection without responding to CONNECT/ },
  { behaviour: 'close after CONNECT', code: 'NETWORK', message: /proxy closed the connection without responding to CONNECT/ },
  { behaviour: 'never respond', code: 'NETWORK', message: /proxy did not respond to CONNECT within 500 ms/ },
  { behaviour: 'refuse', code: 'NETWORK', message: /connect ECONNREFUSED 127\.0\.0\.1:\d+/ },
  { behaviour: 'open the tunnel, pass nothing on', code: 'TIMEOUT', message: /no complete response within 1000 ms/ },
];

describe('a misbehaving proxy: one error per message, a bounded number of connections', function () {
  this.timeout(30_000);
  const env = useSandbox();
  const proxyEnv = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'];
  const savedEnv: Record<string, string | undefined> = {};
  let proxy: FakeProxy | undefined;

  before(function () {
    for (const name of proxyEnv) {
      savedEnv[name] = process.env[name];
      delete process.env[name];
    }
  });
  after(function () {
    for (const name of proxyEnv) if (savedEnv[name] !== undefined) process.env[name] = savedEnv[name];
  });
  afterEach(async function () {
    await helper.unload();
    await proxy?.close();
    proxy = undefined;
  });

  for (const { type, msg } of NODES) {
    for (const { behaviour, code, message } of CASES) {
      it(`${type}, a proxy that will ${behaviour}: one ${code} within the attempts, ${MAX_CONNECTIONS} connections at most`, async function () {
        proxy = behaviour === 'refuse' ? await refusingProxy() : await startFakeProxy(behaviour);
        await helper.load(
          [nodeModule('svc-config'), nodeModule(type), require(PROXY_NODE)],
          [
            configNode(env.sandbox, { proxy: 'px', timeout: TIMEOUT_MS, maxRetries: MAX_RETRIES }),
            { id: 'n', type, server: CONFIG_ID, wires: [['out']] },
            { id: 'px', type: 'http proxy', name: '', url: proxy.url, noproxy: [] },
            { id: 'out', type: 'helper' },
          ],
          sandboxCredentials(),
        );
        const started = Date.now();
        const { error } = await expectError('n', { ...msg }, ERROR_WITHIN_MS + 2000);
        const elapsed = Date.now() - started;
        should(error.code).equal(code, error.message);
        should(error.message).match(message);
        should(elapsed).be.below(ERROR_WITHIN_MS);
        const atError = proxy.connections();
        should(atError).be.belowOrEqual(MAX_CONNECTIONS);
        await sleep(QUIET_MS);
        should(proxy.connections()).equal(atError);
        should(env.sandbox.requests()).have.length(0);
      });
    }
  }
});

describe('a Redis address that accepts connections and drops them: reconnections are spaced, not a loop', function () {
  this.timeout(15_000);
  for (const behaviour of ['closes at once', 'replies with an error and closes'] as const) {
    it(`a server that ${behaviour}: at most 8 connections in 4 s, local state meanwhile`, async function () {
      let connections = 0;
      const sockets = new Set<net.Socket>();
      const server = net.createServer((socket) => {
        connections++;
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
        if (behaviour === 'closes at once') socket.destroy();
        else socket.end('-ERR not a redis server\r\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const warnings: string[] = [];
      const state = new SharedState({
        url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
        log: { warn: (text) => warnings.push(english(text)), info: () => undefined },
      });
      try {
        await sleep(4000);
        // Reconnections after 0.2, 0.4, 0.6 … s, then every 2 s: 6 or 7 in 4 s.
        should(connections).be.within(2, 8);
        should(state.mode).equal('unavailable');
        should(warnings).have.length(1);
      } finally {
        state.close();
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  }
});
