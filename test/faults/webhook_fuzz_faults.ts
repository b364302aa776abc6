import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import should from 'should';
import { Readable } from 'node:stream';
import { Pool } from 'undici';
import { helper, nodeModule, Fields } from '../support/harness';
import { nowSeconds, signatureHeader, webhookDigest } from '../bench/webhook-signing';
import { ConsoleCapture, OutcomeLedger, ProcessFailures, Random, integer, leaks, pick, seededRandom, suiteSeed, userVisibleTexts } from '../support/faults';

/**
 * Fuzz pass on svc-webhook-in: thousands of random and mutated requests (signature headers,
 * timestamps, bodies, sizes, encodings, content types, replays, broken connections). Checked against
 * an oracle written here from the spec, not from the node:
 * - safety: a request gets 200 only if one of its `t`/`digestV1` pairs is the SHA-256 of
 *   `<t>.<secret>.<exact body bytes>` and `t` lies within the tolerance; a pair accepted before is a
 *   copy, acknowledged (200) without a message;
 * - liveness: every correctly signed, fresh, well-formed request gets 200;
 * - every pair accepted gives exactly one message, carrying the parsed body;
 * - nothing crashes it: no 5xx, no unhandled rejection or uncaught exception, and it works afterwards;
 * - the secret appears in no log line, status text or message.
 */

const SECRET = 'fuzz-webhook-secret';
const PATH = '/fuzz-hook';
const TOLERANCE_SEC = 300;
const MAX_BODY_KB = 64;
const REQUESTS = 3000;
const BROKEN_CONNECTIONS = 60;
const CONCURRENCY = 32;

interface FuzzRequest {
  kind: string;
  method: 'POST' | 'PUT' | 'GET';
  path: string;
  headers: Record<string, string | string[]>;
  body: Buffer;
  /** Sent as chunks without a content-length. */
  chunked?: boolean;
  /** Correctly signed, fresh, JSON, within the size limit: the node must accept it. */
  mustAccept: boolean;
}

interface Exchange {
  request: FuzzRequest;
  status: number;
}

/** A JSON body with a unique nonce, shaped like the sandbox's webhooks (pretty-printed). */
function jsonBody(random: Random, nonce: number): Buffer {
  const data = { nonce, reading: Math.round(random() * 1e6) / 1e3, label: pick(random, ['plain', 'Grüße', '東京', 'emoji 🚲', 'quote " and \\ backslash']) };
  return Buffer.from(JSON.stringify({ topicId: 1, locationId: 'cell-1', data, publishedAt: new Date().toISOString() }, null, 2));
}

function valid(random: Random, nonce: number, kind = 'valid'): FuzzRequest {
  const body = jsonBody(random, nonce);
  return {
    kind,
    method: 'POST',
    path: PATH,
    headers: { 'content-type': 'application/json', 'svc-signature': signatureHeader(nowSeconds(), SECRET, body) },
    body,
    mustAccept: kind === 'valid',
  };
}

/** A request signed over `body` with `t`, the other fields as given. */
function signed(kind: string, body: Buffer, t: string, secret = SECRET, contentType = 'application/json'): FuzzRequest {
  return {
    kind,
    method: 'POST',
    path: PATH,
    headers: { 'content-type': contentType, 'svc-signature': signatureHeader(t, secret, body) },
    body,
    mustAccept: false,
  };
}

function randomText(
  random: Random,
  length: number,
  alphabet = ' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~',
): string {
  let text = '';
  for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
  return text;
}

function flipHexCharacter(random: Random, header: string): string {
  const start = header.indexOf('digestV1=') + 'digestV1='.length;
  const at = start + integer(random, 0, 63);
  const replacement = header[at] === '0' ? '1' : '0';
  return header.slice(0, at) + replacement + header.slice(at + 1);
}

/** One mutation of a valid request: what an attacker, a broken proxy or a sloppy sender might send. */
function mutated(random: Random, nonce: number, replayable: FuzzRequest[]): FuzzRequest {
  const base = valid(random, nonce, 'mutated');
  const sig = base.headers['svc-signature'] as string;
  const t = nowSeconds();
  const mutations: Array<() => FuzzRequest> = [
    () => ({ ...base, kind: 'digest with one hex digit changed', headers: { ...base.headers, 'svc-signature': flipHexCharacter(random, sig) } }),
    () => ({ ...base, kind: 'digest cut short', headers: { ...base.headers, 'svc-signature': sig.slice(0, -integer(random, 1, 10)) } }),
    () => ({
      ...base,
      kind: 'digest in upper case',
      headers: { ...base.headers, 'svc-signature': sig.replace(/digestV1=(\w+)/, (_m, d: string) => `digestV1=${d.toUpperCase()}`) },
    }),
    () => ({
      ...base,
      kind: 't changed after signing',
      headers: { ...base.headers, 'svc-signature': sig.replace(/t=(\d+)/, (_m, v: string) => `t=${Number(v) + integer(random, 1, 5)}`) },
    }),
    () => signed('stale timestamp', base.body, String(Number(t) - TOLERANCE_SEC - integer(random, 5, 100_000))),
    () => signed('future timestamp', base.body, String(Number(t) + TOLERANCE_SEC + integer(random, 5, 100_000))),
    () => signed('timestamp in milliseconds', base.body, String(Date.now())),
    () => signed('timestamp with a fraction', base.body, `${t}.${integer(random, 0, 999)}`),
    () => signed('timestamp not a number', base.body, pick(random, ['abc', '-1', '1e9', '', ' ', '0x6553f100', '+1700000000'])),
    () => signed('signed with another secret', base.body, t, pick(random, ['other-secret', `${SECRET} `, SECRET.toUpperCase(), '', SECRET.slice(0, -1)])),
    () => {
      const body = Buffer.from(base.body);
      body[integer(random, 0, body.length - 1)] ^= 1 << integer(random, 0, 6);
      return { ...base, kind: 'body changed after signing', body };
    },
    () => ({
      ...base,
      kind: 'whitespace added to the body after signing',
      body: Buffer.concat([base.body, Buffer.from(pick(random, [' ', '\n', '\r\n', '\t']))]),
    }),
    () => ({ ...base, kind: 'body re-serialised after signing', body: Buffer.from(JSON.stringify(JSON.parse(base.body.toString('utf8')))) }),
    () => ({ ...base, kind: 'no signature header', headers: { 'content-type': 'application/json' } }),
    () => ({ ...base, kind: 'empty signature header', headers: { ...base.headers, 'svc-signature': '' } }),
    () => ({ ...base, kind: 'garbage signature header', headers: { ...base.headers, 'svc-signature': randomText(random, integer(random, 1, 300)) } }),
    () => ({
      ...base,
      kind: 'signature header twice',
      headers: { ...base.headers, 'svc-signature': [sig, pick(random, [sig, flipHexCharacter(random, sig)])] },
    }),
    () => ({ ...base, kind: 'parts reordered and spaced', headers: { ...base.headers, 'svc-signature': ` ${sig.split(',').reverse().join(' , ')} ` } }),
    () => ({ ...base, kind: 'unknown parts added', headers: { ...base.headers, 'svc-signature': `${sig},v0=abc,digestV2=${'f'.repeat(64)}` } }),
    () => ({
      ...base,
      kind: 'a wrong digest before the right one',
      headers: { ...base.headers, 'svc-signature': `${sig.split(',')[0]},digestV1=${'0'.repeat(64)},${sig.split(',')[1]}` },
    }),
    () => ({ ...base, kind: 'two timestamps', headers: { ...base.headers, 'svc-signature': `t=${Number(t) - 1},${sig}` } }),
    () => ({ ...base, kind: 'very long header', headers: { ...base.headers, 'svc-signature': `${sig},x=${'a'.repeat(integer(random, 4000, 20_000))}` } }),
    () => signed('content type text/plain', base.body, t, SECRET, 'text/plain'),
    () => ({ ...base, kind: 'no content type', headers: { 'svc-signature': sig } }),
    () => signed('content type with charset', base.body, t, SECRET, 'application/json; charset=utf-8'),
    () => signed('content type +json', base.body, t, SECRET, 'application/cloudevents+json'),
    () => signed('content type in capitals', base.body, t, SECRET, 'APPLICATION/JSON'),
    () => signed('empty body', Buffer.alloc(0), t),
    () => signed('body not JSON', Buffer.from(randomText(random, integer(random, 1, 500))), t),
    () => signed('random bytes', Buffer.from(Array.from({ length: integer(random, 1, 2000) }, () => integer(random, 0, 255))), t),
    () => signed('JSON scalar', Buffer.from(pick(random, ['42', '"text"', 'null', 'true', '[]'])), t),
    () => signed('deeply nested JSON', Buffer.from(`${'['.repeat(5000)}${']'.repeat(5000)}`), t),
    () => {
      const [prefix, suffix] = [`{"nonce":${nonce},"filler":"`, '"}'];
      return signed('body at the size limit', Buffer.from(prefix + 'x'.repeat(MAX_BODY_KB * 1024 - prefix.length - suffix.length) + suffix), t);
    },
    () => signed('body over the size limit', Buffer.from(JSON.stringify({ nonce, filler: 'x'.repeat(MAX_BODY_KB * 1024 + integer(random, 1, 200_000)) })), t),
    () => {
      const gzipped = gzipSync(base.body);
      const request = signed('gzip body signed compressed', gzipped, t);
      request.headers['content-encoding'] = 'gzip';
      return request;
    },
    () => ({ ...base, kind: 'gzip body signed plain', body: gzipSync(base.body), headers: { ...base.headers, 'content-encoding': 'gzip' } }),
    () =>
      signed(
        'UTF-16 body',
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(base.body.toString('utf8'), 'utf16le')]),
        t,
        SECRET,
        'application/json; charset=utf-16',
      ),
    () =>
      signed('invalid UTF-8 inside a string', Buffer.concat([Buffer.from(`{"nonce":${nonce},"bad":"`), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]), t),
    () => ({ ...base, kind: 'chunked transfer', chunked: true }),
    () => ({ ...base, kind: 'PUT instead of POST', method: 'PUT' }),
    () => ({ ...base, kind: 'GET', method: 'GET', body: Buffer.alloc(0) }),
    () => ({ ...base, kind: 'path with a trailing slash', path: `${PATH}/` }),
    () => ({ ...base, kind: 'path in other case', path: PATH.toUpperCase() }),
    () => ({ ...base, kind: 'path with a query', path: `${PATH}?x=${nonce}` }),
    () => (replayable.length > 0 ? { ...pick(random, replayable), kind: 'replay of an accepted request', mustAccept: false } : valid(random, nonce)),
  ];
  return pick(random, mutations)();
}

/** A payload as text, to compare; JSON nested deeper than JSON.stringify goes compares as one value. */
function fingerprint(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return 'nested too deeply to compare';
  }
}

/** The oracle: the (t, digest) pair that makes this request genuine, if there is one. */
function genuinePair(request: FuzzRequest, now: number): string | undefined {
  const values = request.headers['svc-signature'];
  const parts = (Array.isArray(values) ? values.join(',') : (values ?? '')).split(',').map((part) => part.trim());
  const of = (key: string) => parts.filter((p) => p.toLowerCase().startsWith(`${key}=`)).map((p) => p.slice(key.length + 1).trim());
  for (const t of of('t')) {
    const seconds = Number(t) >= 1e11 ? Number(t) / 1000 : Number(t);
    if (!/^\d+(\.\d+)?$/.test(t) || Math.abs(seconds - now / 1000) > TOLERANCE_SEC + 5) continue;
    const expected = webhookDigest(t, SECRET, request.body);
    for (const digest of of('digestv1')) {
      if (digest.toLowerCase() === expected) return `${t}:${expected}`;
    }
  }
  return undefined;
}

describe('fuzz: svc-webhook-in accepts nothing that is not correctly signed', function () {
  this.timeout(120_000);
  const seed = suiteSeed('webhook fuzz');
  const failures = new ProcessFailures();
  /** RED.httpNode, an express app: also a plain `(req, res, next)` handler. */
  const nodeApi: { httpNode?: (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) => void } = {};
  let server: http.Server;
  let origin: string;

  before(async function () {
    failures.start();
    // Node-RED serves RED.httpNode behind its own server; the test helper does not, so this one does.
    server = http.createServer((req, res) => {
      if (!nodeApi.httpNode) return void res.writeHead(503).end();
      nodeApi.httpNode(req, res, () => res.writeHead(404).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async function () {
    failures.stop();
    await helper.unload();
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it(`${REQUESTS} random and mutated requests, and ${BROKEN_CONNECTIONS} broken connections`, async function () {
    const random = seededRandom(seed);
    const captureNodeApi = (red: { httpNode: NonNullable<typeof nodeApi.httpNode> }) => {
      nodeApi.httpNode = red.httpNode;
    };
    await helper.load(
      [nodeModule('svc-webhook-in'), captureNodeApi],
      [
        { id: 'n1', type: 'svc-webhook-in', url: PATH, tolerance: TOLERANCE_SEC, maxBodyKb: MAX_BODY_KB, wires: [['out']] },
        { id: 'out', type: 'helper' },
      ],
      { n1: { secret: SECRET } },
    );
    const ledger = new OutcomeLedger('n1');
    const outputs: Fields[] = [];
    helper.getNode('out').on('input', (msg: Fields) => outputs.push(msg));
    const captured = new ConsoleCapture();
    const pool = new Pool(origin, { connections: CONCURRENCY, headersTimeout: 10_000, bodyTimeout: 10_000 });
    const exchanges: Exchange[] = [];
    const acceptedPairs = new Set<string>();
    /** The request that first got a 200 for each pair: later copies are acknowledged without a message. */
    const delivered: FuzzRequest[] = [];
    let copies = 0;
    const violations: string[] = [];
    const replayable: FuzzRequest[] = [];
    let nonce = 0;

    const send = async (request: FuzzRequest): Promise<void> => {
      const now = Date.now();
      const pair = genuinePair(request, now);
      const body = request.chunked ? Readable.from([request.body.subarray(0, 10), request.body.subarray(10)]) : request.body;
      let status: number;
      try {
        const res = await pool.request({
          path: request.path,
          method: request.method,
          headers: request.headers,
          body: request.method === 'GET' ? undefined : body,
        });
        await res.body.arrayBuffer();
        status = res.statusCode;
      } catch (err) {
        // A request the server cut off (a header too large for Node's parser) was not accepted.
        status = 0;
        if (!/UND_ERR_SOCKET|ECONNRESET|other side closed/i.test(`${(err as { code?: string }).code} ${(err as Error).message}`)) {
          violations.push(`${request.kind}: the request failed with ${(err as Error).message}`);
        }
      }
      exchanges.push({ request, status });
      if (status >= 500) violations.push(`${request.kind}: responded with ${status}`);
      if (status === 200) {
        if (!pair) violations.push(`${request.kind}: ACCEPTED without a correct signature: ${JSON.stringify(request.headers)}`);
        else if (acceptedPairs.has(pair)) copies++;
        else {
          acceptedPairs.add(pair);
          delivered.push(request);
        }
        if (request.kind === 'valid') replayable.push(request);
      } else if (request.mustAccept) {
        violations.push(`${request.kind}: a correctly signed request was refused with ${status}`);
      }
    };

    captured.start();
    try {
      const queue = Array.from({ length: REQUESTS }, () => random());
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (queue.length > 0) {
            const roll = queue.pop() as number;
            nonce++;
            await send(roll < 0.3 ? valid(random, nonce) : mutated(random, nonce, replayable));
          }
        }),
      );
      await brokenConnections(random);
      // Afterwards it still works.
      await send(valid(random, ++nonce));
    } finally {
      captured.stop();
      await pool.close();
    }

    // Every accepted pair became exactly one message with its body; copies none.
    await new Promise((resolve) => setTimeout(resolve, 200));
    if (outputs.length !== delivered.length) violations.push(`${delivered.length} pairs accepted but ${outputs.length} messages sent`);
    const expectedPayloads = new Set(delivered.map((request) => fingerprint(JSON.parse(request.body.toString('utf8')))));
    for (const msg of outputs) {
      if (!expectedPayloads.has(fingerprint(msg.payload)))
        violations.push(`a message whose payload no accepted request carried: ${fingerprint(msg.payload).slice(0, 200)}`);
    }
    if (violations.length > 0) throw new Error(`seed ${seed}: ${violations.length} violation(s):\n  ${violations.slice(0, 30).join('\n  ')}`);
    should(exchanges.filter((a) => a.request.kind === 'valid').length).be.above(REQUESTS / 5);
    // Copies of accepted requests were sent, and acknowledged without a message.
    should(exchanges.filter((a) => a.request.kind === 'replay of an accepted request').length).be.above(0);
    should(copies).be.above(0);
    should(failures.seen).be.empty();
    const seen = [...ledger.visible(), ...outputs.map((msg) => ({ where: 'output', value: msg }))];
    should(leaks(userVisibleTexts(captured, seen), [SECRET])).be.empty();
    ledger.detach();
  });

  /** Requests whose connection breaks: a body shorter than its content-length, garbage instead of HTTP, a stall. */
  async function brokenConnections(random: Random): Promise<void> {
    const { port } = new URL(origin);
    for (let i = 0; i < BROKEN_CONNECTIONS; i++) {
      const body = jsonBody(random, -i);
      const head = [
        `POST ${PATH} HTTP/1.1`,
        'host: 127.0.0.1',
        'content-type: application/json',
        `svc-signature: ${signatureHeader(nowSeconds(), SECRET, body)}`,
      ];
      const variants = [
        Buffer.concat([Buffer.from([...head, `content-length: ${body.length}`, '', ''].join('\r\n')), body.subarray(0, integer(random, 0, body.length - 1))]),
        Buffer.from(randomText(random, integer(random, 1, 400))),
        Buffer.from([...head, 'transfer-encoding: chunked', '', 'zz\r\nnot a chunk\r\n'].join('\r\n')),
        Buffer.from([...head, `content-length: ${body.length}`, `content-length: ${body.length + 1}`, '', body.toString()].join('\r\n')),
      ];
      await new Promise<void>((resolve) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => {
          socket.write(pick(random, variants));
          setTimeout(() => socket.destroy(), integer(random, 0, 30));
        });
        socket.on('error', () => undefined);
        socket.on('close', () => resolve());
      });
    }
  }
});
