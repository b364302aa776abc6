import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import should from 'should';
import { Fields } from '../support/harness';
import { NodeRedProcess, runtimeUnderTest } from '../support/node-red-process';
import { deploy, userDirWithPack } from '../support/process-flows';
import { RedisServer } from '../support/redis-server';
import { MASTER_NAME, RedisClusterDeployment, SentinelDeployment, deploymentToolsAvailable } from '../support/redis-deployments';
import { SECRET_CHARACTERS, partsIn, passwordWith } from '../support/redis-url-secrets';
import { waitUntil, waitUntilAsync } from '../support/wait';

/**
 * `npm run test:instances` (issue 51 point 1): a password holding any of `@ : / , ? # & + % space`
 * or characters beyond ASCII, percent-encoded as the docs say (or as typed, for the characters they
 * let be), is the password Redis gets: `+` a plus sign in `sentinelPassword` too. Real
 * redis-servers ask for it (`requirepass`, and an ACL user per password): one Redis, the master and
 * replica of a Sentinel deployment and its Sentinels (`sentinelPassword`), the nodes of a Cluster.
 * A real Node-RED's Test connection gets `shared state ✓` for each URL, its deployed svc-config nodes
 * connect, and no text of it holds a part of any password.
 */
const RUNTIME = runtimeUnderTest();
/** The default user's password (`requirepass`): the characters that URL and form encodings treat differently. */
const REQUIREPASS = passwordWith('@&+% ü');

/** Characters the docs let a user name or password be written with as they are (see docs/several-instances.md), and a parameter's value. */
const AS_TYPED_IN_USERINFO = ['@', ':', ',', '&', '+', 'ü', '🔑'];
const AS_TYPED_IN_PARAMETER = ['@', ':', '/', ',', '?', '+', 'ü', '🔑'];

/** An ACL user per character, `u<index>`, whose password holds it. */
const users = SECRET_CHARACTERS.map((char, i) => ({ name: `u${i}`, password: passwordWith(char) }));

async function addUsers(port: number, password?: string): Promise<void> {
  const client = new Redis({ host: '127.0.0.1', port, password, lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  try {
    for (const user of users) await client.call('ACL', 'SETUSER', user.name, 'on', `>${user.password}`, '~*', '&*', '+@all');
  } finally {
    client.disconnect();
  }
}

describe('a Redis password holding any character reaches Redis as it is (issue 51 point 1)', function () {
  this.timeout(240_000);
  let redis: RedisServer;
  let sentinel: SentinelDeployment;
  let cluster: RedisClusterDeployment;
  let dir: ReturnType<typeof userDirWithPack>;
  let nodeRed: NodeRedProcess;
  const replies: string[] = [];

  before(async function () {
    if (!deploymentToolsAvailable())
      throw new Error('redis-server, redis-sentinel or redis-cli is not installed: apt-get install -y redis-server redis-sentinel (.ci/run does it)');
    redis = await RedisServer.start();
    await addUsers(redis.port);
    const admin = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true });
    await admin.config('SET', 'requirepass', REQUIREPASS);
    admin.disconnect();
    [sentinel, cluster] = await Promise.all([SentinelDeployment.start(), RedisClusterDeployment.start()]);
    for (const server of [...sentinel.servers, ...sentinel.sentinels, ...cluster.servers]) await addUsers(server.port);
    dir = userDirWithPack();
    fs.writeFileSync(path.join(dir.userDir, 'settings.js'), "module.exports = { logging: { console: { level: 'debug', audit: true } } };\n");
    nodeRed = await NodeRedProcess.start(dir.userDir, RUNTIME);
  });
  after(async function () {
    await nodeRed?.stop(10_000);
    await Promise.all([redis?.remove(), sentinel?.remove(), cluster?.remove()]);
    dir?.remove();
  });

  /** Every URL that must work: each user's password in every form, the Sentinels' own in `sentinelPassword`, and `requirepass`. */
  function urls(): Array<{ url: string; password: string }> {
    const sentinels = sentinel.sentinels.map((s) => `127.0.0.1:${s.port}`).join(',');
    const nodes = cluster.servers.map((s) => `127.0.0.1:${s.port}`).join(',');
    const written = (password: string) => encodeURIComponent(password);
    return [
      { url: `redis://:${written(REQUIREPASS)}@127.0.0.1:${redis.port}/0`, password: REQUIREPASS },
      ...users.flatMap(({ name, password }) => [
        { url: `redis://${name}:${written(password)}@127.0.0.1:${redis.port}/1`, password },
        { url: `redis-sentinel://${name}:${written(password)}@${sentinels}/${MASTER_NAME}`, password },
        { url: `redis-sentinel://${sentinels}/${MASTER_NAME}?sentinelUsername=${name}&sentinelPassword=${written(password)}`, password },
        { url: `redis-cluster://${name}:${written(password)}@${nodes}`, password },
      ]),
      ...users
        .filter((_user, i) => AS_TYPED_IN_USERINFO.includes(SECRET_CHARACTERS[i]))
        .flatMap(({ name, password }) => [
          { url: `redis://${name}:${password}@127.0.0.1:${redis.port}`, password },
          { url: `redis-sentinel://${name}:${password}@${sentinels}/${MASTER_NAME}?db=2`, password },
          { url: `redis-cluster://${name}:${password}@${nodes}`, password },
        ]),
      ...users
        .filter((_user, i) => AS_TYPED_IN_PARAMETER.includes(SECRET_CHARACTERS[i]))
        .map(({ name, password }) => ({ url: `redis-sentinel://${sentinels}/${MASTER_NAME}?sentinelUsername=${name}&sentinelPassword=${password}`, password })),
    ];
  }

  it('Test connection says shared state ✓ for every URL; deployed, each svc-config connects; no text holds a part of a password', async function () {
    const cases = urls();
    for (const { url } of cases) {
      const body = { id: 'none', baseUrl: 'http://127.0.0.1:9', authUrl: 'http://127.0.0.1:9', tls: '', proxy: '', credentials: { redisUrl: url } };
      const res = await nodeRed.request('/svc-config/test', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await res.text();
      replies.push(text);
      const shared = (JSON.parse(text) as { checks: Fields[] }).checks.find((check) => check.credential === 'shared');
      should(shared?.outcome).equal('accepted', `${url}: ${text}`);
    }
    // The one Redis: each svc-config node's connection is named (CLIENT SETNAME, after AUTH) once its password is taken.
    const single = cases.filter(({ url }) => url.startsWith('redis://'));
    await deploy(nodeRed, [
      { id: 'tab', type: 'tab', label: 'passwords' },
      ...single.map(({ url }, i) => ({
        id: `cfg-${i}`,
        type: 'svc-config',
        name: `password ${i}`,
        baseUrl: 'http://127.0.0.1:9',
        credentials: { redisUrl: url },
      })),
    ]);
    const admin = new Redis({ host: '127.0.0.1', port: redis.port, password: REQUIREPASS });
    try {
      const connected = async () => ((await admin.client('LIST')) as string).split('\n').filter((line) => line.includes('name=node-red-location ')).length;
      await waitUntilAsync(async () => (await connected()) === single.length, `${single.length} svc-config connections`, 30_000);
      const named = ((await admin.client('LIST')) as string).split('\n').filter((line) => line.includes('name=node-red-location '));
      const userOf = (url: string) => /^redis:\/\/([^:]*):/.exec(url)?.[1] || 'default';
      should(named.map((line) => /user=(\S+)/.exec(line)?.[1]).sort()).eql(single.map(({ url }) => userOf(url)).sort());
    } finally {
      admin.disconnect();
    }
    await waitUntil(() => nodeRed.log.some((line) => line.includes('[audit]')), 'an audit line', 5000);
    should(nodeRed.log.join('\n')).not.match(/shared state unavailable|shared state is off/);
    for (const { url, password } of cases) {
      for (const [where, text] of [
        ['log', nodeRed.log.join('\n')],
        ['replies', replies.join('\n')],
      ]) {
        should(partsIn(text, password)).eql([], `${where} holds part of the password of ${url}`);
      }
    }
  });
});
