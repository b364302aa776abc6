import should from 'should';
import { CONFIG_ID, expectError, helper, Fields, loadWithSandbox, sendAndWait, useSandbox } from '../support/harness';
import { runEditorScripts } from '../support/editor-script';

type Status = { fill?: string; shape?: string; text?: string };
type StatusCall = { args: unknown[]; thisValue: { id?: string } };

function statusesOf(nodeId: string): Status[] {
  const calls = (helper.getNode(nodeId).status.getCalls?.() ?? []) as StatusCall[];
  return calls.filter((call) => call.thisValue?.id === nodeId).map((call) => call.args[0] as Status);
}

/** One node of each endpoint family, each with a message it would send if its configuration allowed. */
const FAMILY_NODES: Record<string, { node: Fields; msg: Fields }> = {
  project: { node: { id: 'geo', type: 'svc-geocode' }, msg: { payload: '1 Main Street' } },
  vpm: {
    node: { id: 'route', type: 'svc-route' },
    msg: {
      payload: {
        waypoints: [
          { lat: 52.5, lon: 13.4 },
          { lat: 52.52, lon: 13.38 },
        ],
      },
    },
  },
  pubsub: { node: { id: 'pub', type: 'svc-topic-publish' }, msg: { topicId: 1, locationId: 'a', payload: { n: 1 } } },
  bearer: { node: { id: 'words', type: 'svc-words' }, msg: { payload: 'index.home.raft' } },
};
const FAMILIES = Object.keys(FAMILY_NODES);

describe('svc-config checked when flows start', function () {
  const ctx = useSandbox();

  /** Every family's node on one config node with these settings and credentials; none wired to `out`. */
  async function deploy(config: Fields, credentials: Fields = {}): Promise<void> {
    await loadWithSandbox(ctx.sandbox, {
      types: ['svc-geocode', 'svc-route', 'svc-topic-publish', 'svc-words'],
      nodes: [
        { id: 'first', type: 'svc-geocode', wires: [[]] },
        ...FAMILIES.map((family) => ({ ...FAMILY_NODES[family].node, server: CONFIG_ID, wires: [['out']] })),
      ],
      config,
      credentials,
    });
  }

  /** The families whose node shows a red CONFIG_INVALID status at deploy, with that status text. */
  function refusedAtDeploy(): Record<string, string> {
    const refused: Record<string, string> = {};
    for (const family of FAMILIES) {
      const [first] = statusesOf(FAMILY_NODES[family].node.id as string);
      if (first) {
        should(first).containDeep({ fill: 'red', shape: 'ring' });
        refused[family] = first.text ?? '';
      }
    }
    return refused;
  }

  /** What every CONFIG_INVALID error says to do, after its reason. */
  const FIX_CONFIG = ' — fix the svc-config node';

  async function expectConfigError(family: string, pattern: RegExp): Promise<void> {
    const { node, msg } = FAMILY_NODES[family];
    const { error, msg: failed } = await expectError(node.id as string, msg);
    should(error.code).equal('CONFIG_INVALID');
    should(error.message).endWith(FIX_CONFIG);
    should(error.message.slice(0, -FIX_CONFIG.length)).match(pattern);
    should(failed.payload).eql(msg.payload);
    should(ctx.sandbox.log).have.length(0);
    should(statusesOf(node.id as string).pop()).eql({ fill: 'red', shape: 'ring', text: 'CONFIG_INVALID: svc-config unusable' });
  }

  it('refuses a base URL without its scheme for every node, at deploy and for each message, sending nothing', async function () {
    await deploy({ baseUrl: 'api.example.com', maxRetries: 3 });
    should(refusedAtDeploy()).eql({
      project: 'CONFIG_INVALID: the base URL is not an http(s) URL',
      vpm: 'CONFIG_INVALID: the base URL is not an http(s) URL',
      pubsub: 'CONFIG_INVALID: the base URL is not an http(s) URL',
      bearer: 'CONFIG_INVALID: the base URL is not an http(s) URL',
    });
    for (const family of FAMILIES) await expectConfigError(family, /^the svc-config node cannot be used: the base URL is not an http\(s\) URL/);
  });

  it('refuses a token or words URL that is not http(s), and names every problem in the error', async function () {
    await deploy({ authUrl: 'ftp://auth.example.com', sandboxUrl: 'words.example.com' });
    should(Object.keys(refusedAtDeploy()).sort()).eql([...FAMILIES].sort());
    await expectConfigError('bearer', /the token URL is not an http\(s\) URL; the words URL is not an http\(s\) URL$/);
  });

  it('refuses base, token and words URLs with a query, a fragment or user info, at deploy and for each message, sending nothing', async function () {
    const withUser = (user: string) => ctx.sandbox.url.replace('//', `//${user}@`);
    const cases: Array<[Fields, string]> = [
      [{ baseUrl: `${ctx.sandbox.url}/api?x=` }, 'the base URL has a query'],
      [{ baseUrl: `${ctx.sandbox.url}/api?` }, 'the base URL has a query'],
      [{ baseUrl: `${ctx.sandbox.url}/api#` }, 'the base URL has a fragment'],
      [{ baseUrl: `${ctx.sandbox.url}/api#part` }, 'the base URL has a fragment'],
      [{ baseUrl: withUser('user:password') }, 'the base URL has user info'],
      [{ baseUrl: withUser('') }, 'the base URL has user info'],
      [{ authUrl: `${ctx.sandbox.url}/auth?tenant=1` }, 'the token URL has a query'],
      [{ authUrl: withUser('client') }, 'the token URL has user info'],
      [{ sandboxUrl: `${ctx.sandbox.url}#` }, 'the words URL has a fragment'],
    ];
    for (const [config, text] of cases) {
      await deploy(config);
      const refused = refusedAtDeploy();
      should(Object.keys(refused).sort()).eql([...FAMILIES].sort(), JSON.stringify(config));
      for (const family of FAMILIES) should(refused[family]).startWith(`CONFIG_INVALID: ${text}`);
      for (const family of FAMILIES) await expectConfigError(family, new RegExp(`: ${text}`));
      await helper.unload();
    }
  });

  it('refuses a project id of "." or ".." and keys or a project id with CR, LF or NUL, at deploy, sending nothing', async function () {
    await deploy({ projectId: '..' });
    should(refusedAtDeploy()).eql({
      project: 'CONFIG_INVALID: the project id cannot be a segment of a request path ("." or "..")',
      vpm: 'CONFIG_INVALID: the project id cannot be a segment of a request path ("." or "..")',
    });
    await expectConfigError('project', /: the project id cannot be a segment of a request path/);
    await helper.unload();
    await deploy({ projectId: 'project\r\nX-Injected: 1' }, { apiKey: 'key\u0000', pubsubApiKey: 'topics-key\n' });
    const refused = refusedAtDeploy();
    should(Object.keys(refused).sort()).eql(['project', 'pubsub', 'vpm']);
    should(refused.pubsub).equal('CONFIG_INVALID: the topics API key holds a character a header cannot carry (CR, LF, NUL or another control character)');
    await expectConfigError('vpm', /the project id holds a character a header cannot carry .*; the API key holds a character a header cannot carry/);
    await expectConfigError('pubsub', /the topics API key holds a character a header cannot carry/);
  });

  it('asks each family only for its own credentials', async function () {
    await deploy({}, { apiKey: '' });
    should(refusedAtDeploy()).eql({ project: 'CONFIG_INVALID: the API key is not set', vpm: 'CONFIG_INVALID: the API key is not set' });
    await expectConfigError('vpm', /: the API key is not set$/);
    const outcome = await sendAndWait('pub', FAMILY_NODES.pubsub.msg);
    should(outcome.kind === 'error' ? outcome.error.code : 'output').not.equal('CONFIG_INVALID');
    should(ctx.sandbox.log.length).be.above(0);
    await helper.unload();
    ctx.sandbox.log.splice(0);

    await deploy({ projectId: '' }, { pubsubApiKey: '', clientSecret: '' });
    should(refusedAtDeploy()).eql({
      project: 'CONFIG_INVALID: the project id is not set',
      vpm: 'CONFIG_INVALID: the project id is not set',
      pubsub: 'CONFIG_INVALID: the topics API key is not set',
      bearer: 'CONFIG_INVALID: the client secret is not set',
    });
    await expectConfigError('pubsub', /: the topics API key is not set$/);
    await expectConfigError('bearer', /: the client secret is not set$/);
  });

  it('refuses an empty audience for the nodes that need a token, at deploy and for each message, sending nothing (issue 28)', async function () {
    await deploy({ audience: '' });
    should(refusedAtDeploy()).eql({ bearer: 'CONFIG_INVALID: the audience is not set' });
    await expectConfigError('bearer', /: the audience is not set$/);
  });

  it('shows nothing at deploy for a usable configuration', async function () {
    await deploy({});
    should(refusedAtDeploy()).eql({});
  });

  describe('in the editor', function () {
    const { defaults } = runEditorScripts(['svc-config']).definitions.get('svc-config') ?? { defaults: {} };
    const validator = (property: string) => {
      const validate = defaults[property]?.validate;
      if (!validate) throw new Error(`${property} has no validator`);
      return validate;
    };
    const node = {};

    it('validates the base, token and words URLs as the runtime does, with a message', function () {
      const required = validator('baseUrl');
      for (const optional of [validator('authUrl'), validator('sandboxUrl')]) {
        should(optional.call(node, '', {})).be.true();
        should(optional.call(node, 'auth.example.com', {})).equal('svc-config.validation.httpUrl');
      }
      for (const good of ['https://api.example.com', 'http://127.0.0.1:8080/base', '${SVC_BASE_URL}']) should(required.call(node, good, {})).be.true(good);
      should(required.call(node, 'api.example.com', {})).equal('svc-config.validation.httpUrl');
      should(required.call(node, 'https://', {})).equal('svc-config.validation.httpUrl');
      should(required.call(node, 'ftp://files.example.com', {})).equal('svc-config.validation.httpUrl');
      should(required.call(node, '', {})).equal('svc-config.validation.urlRequired');
      for (const extra of [
        'https://h.example/api?x=',
        'https://h.example/api?',
        'https://h.example/api#',
        'https://user:pw@h.example',
        'https://@h.example/api',
      ]) {
        should(required.call(node, extra, {})).equal('svc-config.validation.plainUrl', extra);
      }
      should(required.call(node, 'api.example.com')).be.false();
    });
  });
});
