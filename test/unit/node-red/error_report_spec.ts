import should from 'should';
import { util } from '@node-red/util';
import { helper, Fields, loadWithSandbox, nodeModule, useSandbox } from '../../support/harness';

type StatusCall = { args: Array<{ text?: string }>; thisValue: { id?: string } };

/** The last status text node `id` showed. */
function lastStatus(id: string): string | undefined {
  const calls = (helper.getNode(id).status.getCalls?.() ?? []) as unknown as StatusCall[];
  return calls.filter((call) => call.thisValue?.id === id).at(-1)?.args[0].text;
}

/** What the debug sidebar receives for an error logged by a node that no Catch node handled (Node-RED's own encoding, then the websocket's JSON). */
function sidebarView(logged: unknown): { format: string; shown: unknown } {
  const encoded = util.encodeObject({ msg: logged }) as { format: string; msg: unknown };
  return { format: encoded.format, shown: JSON.parse(JSON.stringify(encoded.msg)) as unknown };
}

/**
 * Issue 21 point 2: an error reads at a glance. msg.error.message is one line, the reason then what
 * to do, without a class name or a stack; code and statusCode stay for Catch flows; the status shows
 * the code and a short reason; the debug sidebar shows an uncaught one as a line of text.
 */
describe('errors a person reads at a glance', function () {
  const ctx = useSandbox();

  async function caughtError(msg: Fields): Promise<Fields> {
    await loadWithSandbox(ctx.sandbox, {
      types: ['svc-geocode'],
      config: { dailyLimit: 0 },
      nodes: [
        { id: 'n1', type: 'svc-geocode', wires: [[]] },
        { id: 'c1', type: 'catch', scope: null, uncaught: false, wires: [['out']] },
      ],
    });
    const caught = new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
    helper.getNode('n1').receive(msg);
    return caught;
  }

  it('a refused key: one line naming the field to fix, code and statusCode for the Catch node, no class name, no stack', async function () {
    ctx.sandbox.setFault('geocode', { status: 401 });
    const msg = await caughtError({ payload: '12 Main Street' });
    const error = msg.error as Fields;
    should(error.code).equal('UNAUTHORIZED');
    should(msg.statusCode).equal(401);
    should(error.message).equal("svc-config 'sandbox': API key refused (401): check the API key and Project id fields");
    should(error.message).not.match(/PlatformError|Error:|\n/);
    should(error).not.have.property('stack');
    should(error.source).match({ id: 'n1', type: 'svc-geocode' });
    should(lastStatus('n1')).equal('UNAUTHORIZED (401): credentials refused');
  });

  it('bad input: the reason and what to do, status INVALID_INPUT with its short reason', async function () {
    const msg = await caughtError({ payload: '   ' });
    const error = msg.error as Fields;
    should(error.code).equal('INVALID_INPUT');
    should(error.message).equal("address is empty — fix the message or the node's settings");
    should(msg).not.have.property('statusCode');
    should(lastStatus('n1')).equal('INVALID_INPUT: bad input');
  });

  it('an uncaught error reaches the debug sidebar as one line of text, not an Error object with a stack', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }] });
    const logged = new Promise<unknown>((resolve) => helper.getNode('n1').once('call:error', (call: { args: unknown[] }) => resolve(call.args[0])));
    helper.getNode('n1').receive({ payload: '' });
    const { format, shown } = sidebarView(await logged);
    should(format).not.match(/error/i);
    should(shown).equal("address is empty — fix the message or the node's settings");
  });

  it('svc-webhook-in reports in the same shape: a code and one line with what to fix; its status names the setting (issue 29 point 6)', async function () {
    await helper.load([nodeModule('svc-webhook-in')], [{ id: 'w1', type: 'svc-webhook-in', url: '/error-shape', verify: 'signature', wires: [[]] }], {});
    const [reported] = (helper.getNode('w1').error as unknown as { getCalls(): Array<{ args: unknown[] }> }).getCalls().map((call) => call.args[0]);
    should(reported).match({ code: 'CONFIG_INVALID' });
    should(sidebarView(reported).shown).match(/^not listening: no secret is set: enter the SecretToken/);
    should(sidebarView(reported).shown).not.match(/fix the message/);
    should(lastStatus('w1')).equal('not listening: no secret set');
  });
});
