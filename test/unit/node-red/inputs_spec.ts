import should from 'should';
import {
  CONFIG_ID,
  configNode,
  expectError,
  helper,
  loadWithSandbox,
  nodeModule,
  sandboxCredentials,
  testSettings,
  useSandbox,
  Fields,
} from '../../support/harness';

/**
 * The one TypedInput reader every node uses: whatever the source (msg path, JSONata, environment,
 * flow or global context), a failure to evaluate it is INVALID_INPUT naming the input and the cause,
 * before any request, and the message is kept. Run on a real Node-RED runtime through the test helper.
 */

/** A context store whose every read fails, as a store whose database is down would. */
function BrokenStore(): object {
  const offline = (callback?: (err: Error) => void) => callback?.(new Error('the store is offline'));
  return {
    open: () => Promise.resolve(),
    close: () => Promise.resolve(),
    get: (_scope: string, _key: string, callback?: (err: Error) => void) => offline(callback),
    set: (_scope: string, _key: string, _value: unknown, callback?: (err: Error) => void) => offline(callback),
    keys: (_scope: string, callback?: (err: Error) => void) => offline(callback),
    delete: () => Promise.resolve(),
    clean: () => Promise.resolve(),
  };
}

/** Each node with TypedInputs, its input under test, and the other inputs a message needs to get that far. */
const NODES: Array<{ type: string; input: string; extra?: Fields }> = [
  { type: 'svc-geocode', input: 'address' },
  { type: 'svc-words', input: 'words' },
  { type: 'svc-bulk-geocode', input: 'addresses' },
  { type: 'svc-isoline', input: 'origins' },
  { type: 'svc-sequence', input: 'waypoints' },
  { type: 'svc-route', input: 'waypoints' },
  { type: 'svc-topic-publish', input: 'data', extra: { topicId: '1', topicIdType: 'str', locationId: 'a', locationIdType: 'str' } },
  { type: 'svc-topic', input: 'operation' },
];

/** What every INVALID_INPUT error says to do, after its reason. */
const FIX_INPUT = " — fix the message or the node's settings";

describe('reading TypedInputs', function () {
  const ctx = useSandbox();
  const geocode = (extra: Fields) => loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode', ...extra }] });

  /** The reason an error of one message gives: INVALID_INPUT saying what to fix, the message kept, nothing sent to the platform. */
  async function refused(msg: Fields = { payload: 'kept' }): Promise<string> {
    const { error, msg: failed } = await expectError('n1', msg);
    should(error.code).equal('INVALID_INPUT');
    should(error.message).not.match(/\[object Object\]/);
    should(error.message).endWith(FIX_INPUT);
    should(failed.payload).eql(msg.payload);
    should(ctx.sandbox.log).have.length(0);
    return error.message.slice(0, -FIX_INPUT.length);
  }

  it('names the input and the path when a msg path cannot be read', async function () {
    await geocode({ address: 'payload[', addressType: 'msg' });
    should(await refused()).match(/^address: cannot read msg\.payload\[: .*unterminated/);
  });

  it('reads a msg path through a missing member as unset, which the node then reports', async function () {
    await geocode({ address: 'request.where', addressType: 'msg' });
    should(await refused()).match(/^address must be a string/);
  });

  it('gives the message and code of a JSONata expression that throws, never [object Object]', async function () {
    await geocode({ address: '$error("no street in this message")', addressType: 'jsonata' });
    should(await refused()).match(/^address: cannot read the JSONata expression: no street in this message \(D3137\)$/);
  });

  it('reports a JSONata expression that does not parse', async function () {
    await geocode({ address: 'payload.(', addressType: 'jsonata' });
    should(await refused()).match(/^address: cannot read the JSONata expression: .+\(S\d+\)$/);
  });

  it('names an environment variable that is not set', async function () {
    delete process.env.SVC_INPUTS_TEST_UNSET;
    await geocode({ address: 'SVC_INPUTS_TEST_UNSET', addressType: 'env' });
    should(await refused()).equal('address: cannot read the environment: the environment variable SVC_INPUTS_TEST_UNSET is not set');
    await helper.unload();
    await geocode({ address: '${SVC_INPUTS_TEST_UNSET}', addressType: 'env' });
    should(await refused()).match(/SVC_INPUTS_TEST_UNSET is not set$/);
  });

  it('reports a flow context key that cannot be evaluated', async function () {
    await helper.load(
      [nodeModule('svc-config'), nodeModule('svc-geocode')],
      [
        { id: 'tab', type: 'tab', label: 'inputs' },
        configNode(ctx.sandbox),
        { id: 'n1', type: 'svc-geocode', z: 'tab', server: CONFIG_ID, address: 'places[msg.missing]', addressType: 'flow', wires: [['out']] },
        { id: 'out', type: 'helper', z: 'tab' },
      ],
      sandboxCredentials(),
    );
    should(await refused()).match(/^address: cannot read flow context "places\[msg\.missing\]": /);
  });

  describe('with a context store that fails', function () {
    beforeEach(function () {
      testSettings({ contextStorage: { default: { module: 'memory' }, broken: { module: BrokenStore } } });
    });

    it('reports the store failure for global context', async function () {
      await geocode({ address: '#:(broken)::office', addressType: 'global' });
      await (helper as unknown as { _redNodes: { loadContextsPlugin(): Promise<void> } })._redNodes.loadContextsPlugin();
      should(await refused()).equal('address: cannot read global context "#:(broken)::office": the store is offline');
    });
  });

  describe('in every node', function () {
    for (const { type, input, extra } of NODES) {
      it(`${type}: a JSONata ${input} that throws is INVALID_INPUT naming ${input}`, async function () {
        await loadWithSandbox(ctx.sandbox, {
          types: [type],
          nodes: [{ id: 'n1', type, ...extra, [input]: '$error("broken source")', [`${input}Type`]: 'jsonata' }],
        });
        should(await refused()).equal(`${input}: cannot read the JSONata expression: broken source (D3137)`);
      });
    }
  });
});
