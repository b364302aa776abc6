import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import should from 'should';
import { Sandbox, startSandbox } from '../../sandbox';
import { RedisServer, RedisTls } from '../support/redis-server';
import { Cluster, geocodeThrough, sharedFlows, showLogsOnFailure } from '../instances/cluster';
import { waitUntil } from '../support/wait';

/**
 * Shared state over TLS (`rediss://`): Debian's redis-server listening with TLS only, on a
 * certificate from a throwaway CA made here with openssl. Node-RED instances given that CA (through
 * NODE_EXTRA_CA_CERTS, as the README says) share state through it; one not given it refuses the
 * server's certificate, says so once, and keeps working on its own state.
 */
describe('shared state on a TLS Redis (rediss://)', function () {
  this.timeout(180_000);
  let certs: string;
  let tls: RedisTls;
  let redis: RedisServer;
  let sandbox: Sandbox;
  let cluster: Cluster;
  const TRUSTING = 2;

  before(async function () {
    if (!RedisServer.available()) throw new Error('redis-server is not installed: apt-get install -y redis-server (.ci/run does it)');
    certs = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-redis-tls-'));
    tls = throwawayCertificates(certs);
    redis = await RedisServer.start(tls);
    sandbox = await startSandbox();
    // Instances 0 and 1 trust the CA; instance 2 knows only the system's CAs.
    cluster = await Cluster.start(TRUSTING + 1, (i) => (i < TRUSTING ? { NODE_EXTRA_CA_CERTS: tls.caFile } : {}));
  });

  showLogsOnFailure(() => cluster);

  after(async function () {
    await cluster?.stop();
    await redis?.remove();
    await sandbox?.close();
    if (certs) fs.rmSync(certs, { recursive: true, force: true });
  });

  it('instances that trust the CA share the daily limit through rediss://; one that does not refuses the certificate with one clear warning, and keeps working', async function () {
    const [a, b, untrusting] = cluster.instances;
    await cluster.deploy(sharedFlows({ sandboxUrl: sandbox.url, redisUrl: redis.url, dailyLimit: 10 }));
    const sent = await Promise.all([a, b].flatMap((instance, i) => Array.from({ length: 8 }, (_v, n) => geocodeThrough(instance, `${n} Tls ${i} Street`))));
    // Counted in Redis across both: exactly the limit got a 200 response, the rest refused before any request.
    should(sent.filter((response) => response.status === 200)).have.length(10);
    should(sandbox.requests('geocode')).have.length(10);
    for (const instance of [a, b]) should(instance.log.filter((line) => line.includes('shared state unavailable'))).eql([]);

    const client = new Redis(redis.url, { tls: { ca: fs.readFileSync(tls.caFile) } });
    try {
      should(await client.keys('svc-location:*')).not.be.empty();
    } finally {
      client.disconnect();
    }

    // The instance without the CA: its own count, no crash, one warning naming the certificate problem.
    should((await geocodeThrough(untrusting, '1 Untrusted Road')).status).equal(200);
    await waitUntil(() => untrusting.log.some((line) => line.includes('shared state unavailable')), 'the TLS warning', 20_000);
    const warnings = untrusting.log.filter((line) => line.includes('shared state unavailable'));
    should(warnings).have.length(1);
    console.log(`      the instance without the CA: ${warnings[0].replace(/^.*?\[warn\] /, '')}`);
    should(warnings[0]).match(/rediss:\/\/127\.0\.0\.1:\d+: .*certificate/i);
    should((await geocodeThrough(untrusting, '2 Untrusted Road')).status).equal(200);
    should(untrusting.log.filter((line) => /unhandled|uncaught/i.test(line))).eql([]);
    should(untrusting.log.filter((line) => line.includes('shared state unavailable'))).have.length(1);
  });
});

/** A CA and a server certificate for 127.0.0.1 signed by it, made with openssl in `dir`. */
function throwawayCertificates(dir: string): RedisTls {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe', timeout: 30_000 });
  openssl(
    'req',
    '-x509',
    '-new',
    '-nodes',
    '-newkey',
    'rsa:2048',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=svc-location test CA',
  );
  openssl('req', '-new', '-nodes', '-newkey', 'rsa:2048', '-keyout', file('redis.key'), '-out', file('redis.csr'), '-subj', '/CN=127.0.0.1');
  fs.writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    file('redis.csr'),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('redis.crt'),
    '-days',
    '2',
    '-extfile',
    file('san.ext'),
  );
  return { certFile: file('redis.crt'), keyFile: file('redis.key'), caFile: file('ca.crt') };
}
