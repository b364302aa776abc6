import fs from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import should from 'should';
import { Fields } from '../support/harness';
import { NodeRedProcess, freePort, runtimeUnderTest } from '../support/node-red-process';
import { deploy, userDirWithPack } from '../support/process-flows';
import { CommsRecorder } from '../support/comms';
import { SECRET_CHARACTERS, partsIn, passwordWith } from '../support/redis-url-secrets';
import { waitUntil } from '../support/wait';
import { REFUSED_AUTH, startEchoingRedis } from '../support/echoing-redis';

/**
 * No part of a Redis password in any text (issue 51 point 1): passwords holding each of
 * `@ : / , ? # & + % space` and characters beyond ASCII, in every form of the Redis URL, written
 * percent-encoded (as the docs say) and as typed without it, from the dialog and from `${NAME}`, in a
 * real Node-RED process. Its whole log (debug level, the audit log on), everything it publishes to the
 * editor (statuses, the debug sidebar), Test connection's replies and what the admin API gives back of
 * the flows hold no three characters in a row of any password. Every URL points at a hostile Redis
 * that repeats each command it gets, AUTH included, in its refusal, and at a port nothing listens on.
 */
const RUNTIME = runtimeUnderTest();

interface UrlCase {
  id: string;
  url: string;
  password: string;
}

/** Each password in each form: percent-encoded as the docs say, and as typed without encoding. */
function urlCases(echoing: number, closed: number): UrlCase[] {
  const cases: UrlCase[] = [];
  SECRET_CHARACTERS.forEach((char, c) => {
    const password = passwordWith(char);
    const written = encodeURIComponent(password);
    const hosts = `127.0.0.1:${echoing},127.0.0.1:${closed},127.0.0.1:${echoing}`;
    const urls = [
      `redis://app:${written}@127.0.0.1:${echoing}/0`,
      `rediss://:${written}@127.0.0.1:${echoing}`,
      `redis-sentinel://:${written}@${hosts}/mymaster?db=0&sentinelPassword=${written}`,
      `rediss-sentinel://app:${written}@${hosts}/mymaster`,
      `redis-cluster://:${written}@${hosts}`,
      `redis://:${password}@127.0.0.1:${echoing}`,
      `redis://app:${password}@127.0.0.1:${closed}/1`,
      `redis-sentinel://:${password}@${hosts}/mymaster`,
      `redis-sentinel://${hosts}/mymaster?sentinelPassword=${password}&db=1`,
      `rediss-cluster://app:${password}@${hosts}`,
    ];
    urls.forEach((url, u) => cases.push({ id: `cfg-${c}-${u}`, url, password }));
  });
  return cases;
}

/** The platform's credentials of every config node: they must stay out of every text as well. */
const PLATFORM_SECRETS = { clientSecret: 'Kp4v@&+% Rm8t/ü', apiKey: 'Lq5w?#:,Sn9u', pubsubApiKey: 'Mr6x&+%Tp1vé' };

/** The environment variable a case's URL is given in. */
const variableOf = (urlCase: UrlCase) => `SVC_R51_${urlCase.id.replace(/-/g, '_').toUpperCase()}`;

/** A config node per case, each with a geocode node that uses it (its status shows shared state). */
function flowsFor(cases: UrlCase[], redisUrl: (urlCase: UrlCase) => string): Fields[] {
  return [
    { id: 'tab', type: 'tab', label: 'redis urls' },
    ...cases.flatMap((urlCase, i) => [
      {
        id: urlCase.id,
        type: 'svc-config',
        name: `redis url ${i}`,
        baseUrl: 'http://127.0.0.1:9',
        authUrl: 'http://127.0.0.1:9',
        audience: 'audience',
        projectId: 'project',
        credentials: { clientId: 'client', ...PLATFORM_SECRETS, redisUrl: redisUrl(urlCase) },
      },
      { id: `geo-${urlCase.id}`, type: 'svc-geocode', z: 'tab', server: urlCase.id, x: 100, y: 40 * (i + 1), wires: [] },
    ]),
  ];
}

describe(`no part of a Redis password in any text (issue 51 point 1, ${RUNTIME.title})`, function () {
  this.timeout(240_000);
  let echoing: net.Server;
  let cases: UrlCase[];
  let dir: ReturnType<typeof userDirWithPack>;
  let nodeRed: NodeRedProcess;
  let comms: CommsRecorder;
  /** Every text Node-RED gave back to the test: Test connection's replies, the flows and credentials the admin API serves. */
  const replies: string[] = [];

  before(async function () {
    echoing = await startEchoingRedis();
    cases = urlCases((echoing.address() as AddressInfo).port, await freePort());
    dir = userDirWithPack();
    fs.writeFileSync(path.join(dir.userDir, 'settings.js'), "module.exports = { logging: { console: { level: 'debug', audit: true } } };\n");
    nodeRed = await NodeRedProcess.start(dir.userDir, RUNTIME, undefined, Object.fromEntries(cases.map((c) => [variableOf(c), c.url])));
    comms = await CommsRecorder.open(nodeRed.port);
  });
  after(async function () {
    comms?.close();
    await nodeRed?.stop(10_000);
    await new Promise((resolve) => echoing?.close(resolve));
    dir?.remove();
  });

  /** Test connection of config node `id` with this Redis URL; with the stored one (`__PWRD__`), the stored platform credentials too. */
  async function testConnection(id: string, redisUrl: string): Promise<Fields> {
    const stored = redisUrl === '__PWRD__' ? { clientId: 'client', clientSecret: '__PWRD__', apiKey: '__PWRD__', pubsubApiKey: '__PWRD__' } : {};
    const body = {
      id,
      baseUrl: 'http://127.0.0.1:9',
      authUrl: 'http://127.0.0.1:9',
      audience: 'audience',
      projectId: 'project',
      tls: '',
      proxy: '',
      credentials: { ...stored, redisUrl },
    };
    let res: Response;
    try {
      res = await nodeRed.request('/svc-config/test', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }, 15_000);
    } catch {
      // Test connection takes 5 s at most: a request with no response by then is a check that never replied.
      return { checks: [{ credential: 'shared', outcome: 'no reply' }] };
    }
    const text = await res.text();
    replies.push(text);
    should(res.status).equal(200, text);
    return JSON.parse(text) as Fields;
  }

  /** Test connection for every case, a few at a time: each reply's shared-state check. */
  async function testAll(redisUrl: (urlCase: UrlCase) => string): Promise<Map<string, Fields>> {
    const checks = new Map<string, Fields>();
    const queue = [...cases];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const reply = await testConnection(next.id, redisUrl(next));
          checks.set(next.id, (reply.checks as Fields[]).find((check) => check.credential === 'shared') ?? {});
        }
      }),
    );
    return checks;
  }

  /** Waits until each case's shared state has been reported on (refused or unavailable), then gives the admin API's views. */
  async function settle(): Promise<void> {
    await waitUntil(
      () =>
        cases.every((c) => comms.messages().some((m) => m.topic === `status/geo-${c.id}` || (m.topic === 'debug' && JSON.stringify(m.data).includes(c.id)))),
      'every configuration to be reported on',
      60_000,
    );
    // Reconnection attempts go on meanwhile: each is another chance for a text to repeat a password.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    for (const url of ['/flows', ...cases.map((c) => `/credentials/svc-config/${c.id}`)]) replies.push(await (await nodeRed.request(url)).text());
  }

  function expectNoPart(): void {
    const texts = { log: nodeRed.log.join('\n'), comms: comms.frames.join('\n'), replies: replies.join('\n') };
    for (const urlCase of cases) {
      for (const [where, text] of Object.entries(texts)) {
        should(partsIn(text, urlCase.password)).eql([], `${where} holds part of the password of ${urlCase.url}`);
      }
    }
    for (const [name, secret] of Object.entries(PLATFORM_SECRETS)) {
      for (const [where, text] of Object.entries(texts)) should(partsIn(text, secret)).eql([], `${where} holds part of ${name}`);
    }
  }

  it('typed in the dialog: the log, statuses, debug sidebar, Test connection (typed and stored) and audit log hold no part of it', async function () {
    await deploy(
      nodeRed,
      flowsFor(cases, (c) => c.url),
    );
    await settle();
    const typed = await testAll((c) => c.url);
    const stored = await testAll(() => '__PWRD__');
    expectNoPart();
    for (const checks of [typed, stored]) {
      should(checks.size).equal(cases.length);
      for (const [id, check] of checks) should(check.outcome).equal('failed', id);
    }
    // The stored platform credentials were tried too (at a closed port).
    should(replies).matchAny(/"credential":"apiKey","outcome":"failed","code":"NETWORK"/);
    // The refusals name the part by its place: a sentinelPassword with `&` as typed, a password with `%`, `/` or `?` as typed.
    const messages = [...typed.values()].map((check) => String(check.message));
    should(messages).matchAny(/query parameter 2 of the Redis Sentinel URL is not one it takes/);
    should(messages).matchAny(/the password in the Redis URL is not valid percent-encoding/);
    should(messages).matchAny(/the Redis URL has an @ in its path/);
    should(messages).matchAny(REFUSED_AUTH);
    const log = nodeRed.log.join('\n');
    should(log).match(/host 2 of the Redis URL is not host:port|the Redis URL has an @ in its path/);
    should(log).match(/\[audit\] .*"event":"svc-config.test"/);
    // The debug sidebar got the warnings and errors, the editor the statuses (`shared state unavailable`).
    const published = comms.messages();
    should(published.filter((m) => m.topic === 'debug').map((m) => JSON.stringify(m.data))).matchAny(/shared state unavailable/);
    should(published.filter((m) => m.topic === 'debug').map((m) => JSON.stringify(m.data))).matchAny(/shared state is off/);
    should(published.filter((m) => m.topic.startsWith('status/geo-')).map((m) => JSON.stringify(m.data))).matchAny(/shared state unavailable/);
  });

  it('from ${NAME}: the same, with Test connection reading the variable as the running node does', async function () {
    await deploy(
      nodeRed,
      flowsFor(cases, (c) => `\${${variableOf(c)}}`),
    );
    await settle();
    const typed = await testAll((c) => `\${${variableOf(c)}}`);
    const stored = await testAll(() => '__PWRD__');
    expectNoPart();
    for (const checks of [typed, stored]) {
      should(checks.size).equal(cases.length);
      for (const [id, check] of checks) should(check.outcome).equal('failed', id);
    }
    should([...typed.values()].map((check) => String(check.message))).matchAny(/query parameter 2 of the Redis Sentinel URL is not one it takes/);
  });
});
