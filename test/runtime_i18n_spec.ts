import path from 'node:path';
import should from 'should';
import { i18n } from '@node-red/util';
import type { NodeAPI } from 'node-red';
import { localize, translate, useRuntimeCatalog } from '../nodes/lib/node-red/i18n';
import { PlatformError } from '../nodes/lib/util/errors';
import { message } from '../nodes/lib/util/messages';
import { expectError, helper, loadWithSandbox, useSandbox } from './support/harness';
import { NODES_DIR } from './support/paths';

/** Node-RED's own i18n (i18next with its catalog loader), as the runtime has it, with the pack's catalogs registered. */
interface NodeRedI18n {
  init(settings: object): Promise<void>;
  registerMessageCatalog(namespace: string, dir: string, file: string): Promise<void>;
  _(key: string, params?: object): string;
  i: { language: string; changeLanguage(lang: string): Promise<unknown> };
}
const runtimeI18n = i18n as unknown as NodeRedI18n;
const NAMESPACE = '@svc/node-red-location/svc-config';

/** What svc-config's RED._ is in a Node-RED whose catalogs include the pack: keys without a namespace read svc-config's. */
const svcConfigRED = { _: (key: string, params?: object) => runtimeI18n._(`${NAMESPACE}:${key}`, params) } as unknown as NodeAPI;

type StatusCall = { args: Array<{ text?: string }>; thisValue: { id?: string } };

describe('runtime texts in the runtime language', function () {
  const ctx = useSandbox();
  let previousLanguage = 'en-US';

  before(async function () {
    await runtimeI18n.init({ lang: 'ja' });
    previousLanguage = runtimeI18n.i.language;
    await runtimeI18n.registerMessageCatalog(NAMESPACE, path.join(NODES_DIR, 'locales'), 'svc-config.json');
    await runtimeI18n.i.changeLanguage('ja');
  });
  after(async function () {
    useRuntimeCatalog({ _: (key: string) => key } as unknown as NodeAPI);
    await runtimeI18n.i.changeLanguage(previousLanguage);
  });

  it('translates statuses and errors through RED._ with their parameters, nested messages included', function () {
    useRuntimeCatalog(svcConfigRED);
    should(translate(message('status.queued', { position: 3 }))).equal('待機中 (3)');
    const error = new PlatformError('INVALID_INPUT', message('error.input.unreadable', { name: 'address', source: message('source.jsonata'), cause: 'boom' }));
    should(error.message).equal('address: cannot read the JSONata expression: boom');
    should(localize(error).message).equal('address: JSONata式 を読み取れません: boom');
    should(error.code).equal('INVALID_INPUT');
  });

  it('falls back to en-US where RED._ knows no catalog (a test helper, a runtime without the pack’s locales)', function () {
    useRuntimeCatalog({ _: (key: string) => key } as unknown as NodeAPI);
    should(translate(message('status.retrying', { attempt: 2, reason: 'SERVER' }))).equal('retry 2 after SERVER');
  });

  it('a node reports its error and status in Japanese on a Japanese runtime', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }] });
    // The helper's RED._ returns keys; svc-config's registration is replaced by the runtime's own.
    useRuntimeCatalog(svcConfigRED);
    const { error } = await expectError('n1', { payload: '   ' });
    should(error.code).equal('INVALID_INPUT');
    should(error.message).equal('address が空です');
    const calls = (helper.getNode('n1').status.getCalls?.() ?? []) as unknown as StatusCall[];
    const texts = calls.filter((call) => call.thisValue?.id === 'n1').map((call) => call.args[0].text);
    should(texts).eql(['リクエスト中', 'INVALID_INPUT']);
  });
});
