import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import express, { Express } from 'express';
import should from 'should';
import { i18n } from '@node-red/util';
import type { NodeAPI } from 'node-red';
import { localize, nodeLog, translate, translateWith } from '../../nodes/lib/node-red/i18n';
import { SharedState } from '../../nodes/lib/state/shared-state';
import { PlatformError } from '../../nodes/lib/util/errors';
import { catalogText } from '../../nodes/lib/util/catalog-text';
import { CONFIG_ID, configNode, expectError, helper, loadWithSandbox, nodeModule, SANDBOX_DEFAULTS, sandboxCredentials, useSandbox } from '../support/harness';
import { freePort } from '../support/node-red-process';
import { waitUntil } from '../support/wait';
import { NODES_DIR, REPO_ROOT } from '../support/paths';

/** Node-RED's own i18n (i18next with its catalog loader), as the runtime has it, with the pack's catalogs registered. */
interface NodeRedI18n {
  init(settings: object): Promise<void>;
  registerMessageCatalog(namespace: string, dir: string, file: string): Promise<void>;
  _(key: string, params?: object): string;
  i: { language: string; changeLanguage(lang: string): Promise<unknown> };
}
const runtimeI18n = i18n as unknown as NodeRedI18n;
const PACKAGE_JSON = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  'node-red': { nodes: Record<string, string> };
};
const NODE_TYPES = Object.keys(PACKAGE_JSON['node-red'].nodes);

/**
 * RED._ of the node set `type` in a Node-RED that has loaded the pack: Node-RED registers each node
 * set's catalog as `<module>/<type>`, and a node set's RED._ reads a key without a namespace in its
 * own catalog, a key with one in that namespace (@node-red/registry's createNodeApi).
 */
function runtimeRED(type: string): NodeAPI {
  const namespace = `${PACKAGE_JSON.name}/${type}`;
  return { _: (key: string, params?: object) => runtimeI18n._(key.includes(':') ? key : `${namespace}:${key}`, params) } as unknown as NodeAPI;
}

/** The node set `type` as Node-RED loads it: registered with its own RED._ (the test helper's returns keys). */
function loadedAsByNodeRed(type: string): (RED: NodeAPI) => void {
  const register = nodeModule(type) as (RED: NodeAPI) => void;
  return (RED) => register(Object.assign(Object.create(RED) as NodeAPI, { _: runtimeRED(type)._ }));
}

type StatusCall = { args: Array<{ text?: string }>; thisValue: { id?: string } };

/** The status texts node `id` has shown, in order. */
function statusTexts(id: string): Array<string | undefined> {
  const calls = (helper.getNode(id).status.getCalls?.() ?? []) as unknown as StatusCall[];
  return calls.filter((call) => call.thisValue?.id === id).map((call) => call.args[0].text);
}

describe('runtime texts in the runtime language', function () {
  const ctx = useSandbox();
  let previousLanguage = 'en-US';

  before(async function () {
    await runtimeI18n.init({ lang: 'ja' });
    previousLanguage = runtimeI18n.i.language;
    for (const type of NODE_TYPES)
      await runtimeI18n.registerMessageCatalog(`${PACKAGE_JSON.name}/${type}`, path.join(NODES_DIR, type, 'locales'), `${type}.json`);
    await runtimeI18n.i.changeLanguage('ja');
  });
  after(async function () {
    translateWith({ _: (key: string) => key });
    await runtimeI18n.i.changeLanguage(previousLanguage);
  });

  it('translates statuses and errors through RED._ with their parameters, nested catalog texts included', function () {
    translateWith(runtimeRED('svc-config'));
    should(translate(catalogText('status.waiting', { count: 3, rate: 80 }))).equal('3 件待機中 (80/分)');
    const error = new PlatformError(
      'INVALID_INPUT',
      catalogText('error.input.unreadable', { name: 'address', source: catalogText('source.jsonata'), cause: 'boom' }),
    );
    should(error.message).equal('address: cannot read the JSONata expression: boom');
    should(localize(error).message).equal('address: JSONata式 を読み取れません: boom');
    should(error.code).equal('INVALID_INPUT');
  });

  it('asks RED._ once per text, however many different figures it is shown with (a status per message)', function () {
    let lookups = 0;
    const RED = runtimeRED('svc-geocode');
    translateWith({ _: (key: string, params?: Record<string, string | number>) => (lookups++, RED._(key, params)) });
    const found = catalogText('status.found');
    for (let used = 1; used <= 1000; used++) {
      const text = translate(catalogText('status.result', { result: found, quota: ` (${used}/50000)` }));
      if (used === 1 || used === 1000) should(text).equal(`${translate(found)} (${used}/50000)`);
    }
    // One lookup for the status template and one for the nested result, not one per message.
    should(lookups).equal(2);
    should(translate(catalogText('status.waiting', { count: 3, rate: 80 }))).equal('3 件待機中 (80/分)');
  });

  it('falls back to en-US where RED._ knows no catalog (a test helper, a runtime without the pack’s locales)', function () {
    translateWith({ _: (key: string) => key });
    should(translate(catalogText('status.retrying', { attempt: 2, reason: 'SERVER' }))).equal('retry 2 after SERVER');
  });

  it('reads every catalog through any node set’s RED._: a node’s own texts, the common ones and svc-config’s, whichever registered', function () {
    for (const type of ['svc-words', 'svc-geocode', 'svc-config']) {
      translateWith(runtimeRED(type));
      should(translate(catalogText('error.geocode.addressEmpty'))).equal('address が空です', `svc-geocode's catalog through ${type}`);
      should(translate(catalogText('status.waiting', { count: 3, rate: 80 }))).equal('3 件待機中 (80/分)', `the common catalog through ${type}`);
      should(translate(catalogText('test.notSet'))).equal('未設定', `svc-config's catalog through ${type}`);
    }
  });

  it('a node registered before svc-config, or in a flow without one, reports in Japanese', async function () {
    // Node-RED loads the node sets of the flow in any order; here svc-config's is never registered.
    await helper.load(
      [loadedAsByNodeRed('svc-geocode')],
      [
        { id: 'n1', type: 'svc-geocode', server: '', wires: [['out']] },
        { id: 'out', type: 'helper' },
      ],
    );
    should(statusTexts('n1')).eql(['svc-config未選択']);
    const { error } = await expectError('n1', { payload: '12 Main Street' });
    should(error.code).equal('INVALID_INPUT');
    should(error.message).startWith('svc-configノードが選択されていません: ノードを開いてプラットフォームを選択してください');
    await helper.unload();
    // Registered in the other order, with svc-config after the node.
    await helper.load(
      [loadedAsByNodeRed('svc-geocode'), loadedAsByNodeRed('svc-config')],
      [configNode(ctx.sandbox), { id: 'n1', type: 'svc-geocode', server: CONFIG_ID, wires: [['out']] }, { id: 'out', type: 'helper' }],
      sandboxCredentials(),
    );
    should((await expectError('n1', { payload: '   ' })).error.message).equal('address が空です。メッセージかノードの設定を直してください');
  });

  it('a node reports its error and status in Japanese on a Japanese runtime', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }] });
    // The helper's RED._ returns keys; the node's registration is replaced by one with the runtime's own.
    translateWith(runtimeRED('svc-geocode'));
    const { error } = await expectError('n1', { payload: '   ' });
    should(error.code).equal('INVALID_INPUT');
    should(error.message).equal('address が空です。メッセージかノードの設定を直してください');
    should(statusTexts('n1')).eql(['リクエスト中', 'INVALID_INPUT: address が空です']);
  });

  it('names an element of a list in Japanese: the waypoint of a route', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-route'], nodes: [{ id: 'n1', type: 'svc-route' }] });
    translateWith(runtimeRED('svc-route'));
    const waypoints = [
      { lat: 52.52, lon: 13.405 },
      { lat: 52.5, lon: 13.38 },
      { lat: 91, lon: 13 },
    ];
    const { error } = await expectError('n1', { payload: { waypoints } });
    should(error.code).equal('INVALID_INPUT');
    should(error.message).equal('経由地 3: 緯度 91 が範囲外です。メッセージかノードの設定を直してください');
  });

  it('reports a CSV that cannot be read in Japanese', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-bulk-geocode'], nodes: [{ id: 'n1', type: 'svc-bulk-geocode' }] });
    translateWith(runtimeRED('svc-bulk-geocode'));
    const { error } = await expectError('n1', { payload: 'address\n"unterminated\n' });
    should(error.code).equal('INVALID_INPUT');
    should(error.message).equal('CSV入力を読み取れません: CSVの末尾で、引用符で囲んだフィールドが閉じていません。メッセージかノードの設定を直してください');
  });

  it('names the size limit a response went past in Japanese, down to its unit', async function () {
    // 0.0005 MB is 524 bytes: the limit is told in bytes.
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }], config: { maxResponseSize: 0.0005 } });
    translateWith(runtimeRED('svc-geocode'));
    ctx.sandbox.setFault('geocode', { hugeBodyBytes: 64 * 1024 });
    const { error } = await expectError('n1', { payload: '1 Main Street' });
    should(error.code).equal('BAD_RESPONSE');
    should(error.message).equal(
      '応答が 524 バイト を超えています (svc-configノードの「最大応答サイズ」): 読み込みません。応答が使えませんでした。しばらくしてからもう一度試してください',
    );
  });

  it('warns in Japanese when the shared state on Redis is unavailable', async function () {
    translateWith(runtimeRED('svc-config'));
    const warnings: string[] = [];
    const port = await freePort();
    const state = new SharedState({ url: `redis://127.0.0.1:${port}`, log: nodeLog({ warn: (text: string) => warnings.push(text), log: () => undefined }) });
    try {
      await waitUntil(() => warnings.length > 0, 'the warning of the outage');
      should(warnings[0]).startWith(`共有状態を利用できません (Redis redis://127.0.0.1:${port}: `);
      should(warnings[0]).endWith('このインスタンス自身の状態で動作しながら再接続します');
    } finally {
      state.close();
    }
  });

  it('names the config node and the field to fix of a refused API key in Japanese', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }], credentials: { apiKey: 'not-the-key' } });
    translateWith(runtimeRED('svc-geocode'));
    const { error } = await expectError('n1', { payload: '1 Main Street' });
    should(error.code).equal('UNAUTHORIZED');
    should(error.message).equal("svc-config 'sandbox': APIキーが拒否されました (401): 「APIキー」「プロジェクトID」欄を確認してください");
  });

  it('"Test connection" reports each credential in Japanese', async function () {
    await helper.startServer();
    try {
      await helper.load([nodeModule('svc-config')], [configNode(ctx.sandbox)], sandboxCredentials());
      translateWith(runtimeRED('svc-config'));
      const res = await helper
        .request()
        .post('/svc-config/test')
        .send({
          id: CONFIG_ID,
          authUrl: ctx.sandbox.url,
          baseUrl: ctx.sandbox.url,
          audience: 'https://elsewhere',
          projectId: SANDBOX_DEFAULTS.projectId,
          credentials: { clientId: SANDBOX_DEFAULTS.clientId, clientSecret: SANDBOX_DEFAULTS.clientSecret, apiKey: '__PWRD__', pubsubApiKey: '' },
        })
        .expect(200);
      const response = res.body as { message: string; checks: Array<{ message: string }> };
      should(response.message).equal('トークン ✗ 403 · APIキー ✓ · トピックキー 未設定');
      should(response.checks.map((check) => check.message)).eql([
        '拒否されました (403): 「クライアントID」「クライアントシークレット」「オーディエンス」欄を確認してください',
        'APIキーは受け付けられました (ジオコーディング1回)',
        '未設定',
      ]);
    } finally {
      await helper.unload();
      await helper.stopServer();
    }
  });

  describe('svc-webhook-in', function () {
    const SECRET = 'current-secret';
    let server: http.Server | undefined;
    afterEach(async function () {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    });

    /** Loads a webhook node and serves its RED.httpNode on a port of its own (the test helper's server does not route to it). */
    async function webhookUrl(): Promise<string> {
      let httpNode: Express | undefined;
      const captureHttpNode = (RED: { httpNode: Express }) => {
        httpNode = RED.httpNode;
      };
      const flow = [configNode(ctx.sandbox), { id: 'w1', type: 'svc-webhook-in', url: '/hook', server: CONFIG_ID, wires: [[]] }];
      await helper.load([nodeModule('svc-config'), nodeModule('svc-webhook-in'), captureHttpNode], flow, { ...sandboxCredentials(), w1: { secret: SECRET } });
      translateWith(runtimeRED('svc-webhook-in'));
      const app = express();
      app.use((req, res, next) => (httpNode ? httpNode(req, res, next) : next()));
      server = http.createServer(app);
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    }

    it('shows why it refused a request in Japanese, and responds to the sender with the reason code', async function () {
      const url = await webhookUrl();
      const body = '{"event":"enter"}';
      const t = Math.floor(Date.now() / 1000);
      const wrongDigest = createHash('sha256').update(`${t}.not-the-secret.${body}`).digest('hex');
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'svc-signature': `t=${t},digestV1=${wrongDigest}` },
        body,
      });
      should(response.status).equal(401);
      should(await response.json()).eql({ error: 'signature mismatch' });
      await waitUntil(() => statusTexts('w1').length > 1, 'the status after the refusal');
      should(statusTexts('w1').at(-1)).equal('受理 0、拒否 1 (署名の不一致)');
    });
  });
});
