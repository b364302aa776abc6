import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import should from 'should';
import { PlatformError, SvcError } from '../../../nodes/lib/util/errors';
import { ClientClosedError, rawBodyOf } from '../../../nodes/lib/webhook/raw-body';
import { ReplayFile, ReplayGuard } from '../../../nodes/lib/webhook/replays';
import { ReceiverConfig, WebhookMessage, WebhookReceiver, replyTo } from '../../../nodes/lib/webhook/receiver';
import { SignatureVerifier, computeDigest } from '../../../nodes/lib/webhook/signature';
import { waitUntil } from '../../support/wait';

const SECRET = 'receiver-secret';

/** The receiver alone on a plain node:http server (no Express, no Node-RED), fed raw requests over a socket. */
describe('webhook receiver (unit)', function () {
  let server: http.Server;
  let port: number;
  let receiver: WebhookReceiver;
  let messages: WebhookMessage[];
  let failures: unknown[];
  /** Requests the server has begun to handle. */
  let requests: number;
  let scopes = 0;

  function start(config: Omit<ReceiverConfig, 'path'>): void {
    // Memory-only replay record; each test its own path, so nothing carries over.
    const scope = `/receiver-${++scopes}`;
    receiver = new WebhookReceiver({ path: scope, ...config }, new ReplayGuard(ReplayFile.at(undefined), scope));
  }

  beforeEach(async function () {
    messages = [];
    failures = [];
    requests = 0;
    start({ verifier: new SignatureVerifier({ secrets: [SECRET], toleranceSec: 300 }), maxBodyBytes: 64 });
    server = http.createServer((req, res) => {
      requests++;
      receiver
        .receive(
          req.headers,
          (limit) => rawBodyOf(req, limit),
          (message) => messages.push(message),
        )
        .then((verdict) => {
          const reply = replyTo(verdict);
          if (reply.retryAfterSec !== undefined) res.setHeader('retry-after', String(reply.retryAfterSec));
          const text = reply.body ? JSON.stringify(reply.body) : '';
          res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
          res.end(text);
        })
        .catch((err: unknown) => {
          failures.push(err);
          res.destroy();
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async function () {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Writes `raw` on a new connection and reads until the server closes it (bounded). */
  function exchange(raw: string): Promise<{ status: number; headers: string; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(raw));
      const chunks: Buffer[] = [];
      socket.setTimeout(5000, () => socket.destroy(new Error('no response within 5 s')));
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const [head, body = ''] = text.split('\r\n\r\n');
        resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body });
      });
    });
  }

  function post(body: string, headers: Record<string, string>): string {
    const lines = Object.entries({ host: '127.0.0.1', connection: 'close', 'content-length': String(Buffer.byteLength(body)), ...headers });
    return `POST /hook HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n${body}`;
  }

  function signed(body: string, t = Math.floor(Date.now() / 1000)): Record<string, string> {
    return { 'content-type': 'application/json', 'svc-signature': `t=${t},digestV1=${computeDigest(String(t), SECRET, body)}` };
  }

  it('delivers a signed request once, as a message without credential headers, and acknowledges its copy with no message', async function () {
    const body = '{"event":"entered","n":1}';
    const request = post(body, { ...signed(body), authorization: 'Bearer not-for-flows' });
    should(await exchange(request)).have.properties({ status: 200, body: '' });
    should(messages).have.length(1);
    should(messages[0].payload).eql({ event: 'entered', n: 1 });
    should(messages[0].webhook.headers).not.have.property('authorization');
    should(messages[0].webhook.timestamp).be.a.Number();
    should(await exchange(request)).have.properties({ status: 200, body: '' });
    should(messages).have.length(1);
  });

  it('refuses with the reason code: no signature, a wrong one, not JSON, too large, invalid JSON', async function () {
    const body = '{"a":1}';
    should(await exchange(post(body, { 'content-type': 'application/json' }))).have.properties({ status: 401, body: '{"error":"missing signature"}' });
    const wrong = { ...signed(body), 'svc-signature': `t=${Math.floor(Date.now() / 1000)},digestV1=${'0'.repeat(64)}` };
    should(await exchange(post(body, wrong))).have.properties({ status: 401, body: '{"error":"signature mismatch"}' });
    should(await exchange(post(body, { ...signed(body), 'content-type': 'text/plain' }))).have.properties({ status: 400, body: '{"error":"not JSON"}' });
    const large = JSON.stringify({ text: 'x'.repeat(100) });
    should(await exchange(post(large, signed(large)))).have.properties({ status: 413, body: '{"error":"body too large"}' });
    should(await exchange(post('{"a":', signed('{"a":')))).have.properties({ status: 400, body: '{"error":"invalid JSON"}' });
    should(messages).be.empty();
  });

  it('checks a custom header, and accepts unsigned requests when it has no verifier', async function () {
    start({ header: { name: 'x-hook-key', value: 'k1' }, maxBodyBytes: 64 });
    should(await exchange(post('{}', { 'x-hook-key': 'k2' }))).have.properties({ status: 401, body: '{"error":"header mismatch"}' });
    should(await exchange(post('{}', { 'x-hook-key': 'k1' }))).have.properties({ status: 200 });
    should(messages).have.length(1);
    should(messages[0].webhook.headers).not.have.property('x-hook-key');
  });

  it('responds 503 with Retry-After once closed, delivering nothing', async function () {
    receiver.close();
    const body = '{}';
    const response = await exchange(post(body, signed(body)));
    should(response).have.properties({ status: 503, body: '{"error":"restarting"}' });
    should(response.headers).match(/retry-after: 5/);
    should(messages).be.empty();
  });

  it('rejects with a ClientClosedError (CLIENT_CLOSED) when the sender hangs up before its body is complete', async function () {
    const body = '{"event":"entered"}';
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.on('connect', resolve));
    socket.write(post(body, signed(body)).slice(0, -5));
    await waitUntil(() => requests === 1, 'the request under way');
    socket.destroy();
    await waitUntil(() => failures.length === 1, 'the failure of the request whose sender hung up');
    const failure = failures[0];
    should(failure).be.instanceOf(ClientClosedError).and.be.instanceOf(SvcError).and.not.be.instanceOf(PlatformError);
    should((failure as SvcError).code).equal('CLIENT_CLOSED');
    should(messages).be.empty();
  });
});
