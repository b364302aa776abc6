import should from 'should';
import { util } from '@node-red/util';
import { helper, Fields, SANDBOX_DEFAULTS, loadWithSandbox, nodeModule, useSandbox } from '../../support/harness';

type StatusCall = { args: Array<{ text?: string }>; thisValue: { id?: string } };

/** The last status text node `id` showed. */
function lastStatus(id: string): string | undefined {
  const calls = (helper.getNode(id).status.getCalls?.() ?? []) as unknown as StatusCall[];
  return calls.filter((call) => call.thisValue?.id === id).at(-1)?.args[0].text;
}

/**
 * What the debug sidebar shows for an error logged by a node that no Catch node handled: Node-RED's own
 * encoding, the websocket's JSON, and the editor's parsing of an `error` format's text (red.js).
 */
function sidebarView(logged: unknown): { format: string; shown: unknown } {
  const encoded = util.encodeObject({ msg: logged }) as { format: string; msg: unknown };
  const received = JSON.parse(JSON.stringify(encoded.msg)) as unknown;
  return { format: encoded.format, shown: /error/i.test(encoded.format) ? (JSON.parse(received as string) as unknown) : received };
}

/**
 * Issue 21 point 2: an error reads at a glance. msg.error.message is one line, the reason then what
 * to do, without a class name or a stack; code and statusCode stay for Catch flows; the status shows
 * the code and a short reason. Issue 51 point 8: what done(err) and node.error(err, msg) get is an
 * Error (with a stack of code locations), so the debug sidebar shows an uncaught one as Node-RED shows
 * an Error, its message that same line.
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

  it('bad input: the reason and what to do, status INVALID_INPUT with its reason naming the field (issue 54)', async function () {
    const msg = await caughtError({ payload: '   ' });
    const error = msg.error as Fields;
    should(error.code).equal('INVALID_INPUT');
    should(error.message).equal("address is empty — fix the message or the node's settings");
    should(msg).not.have.property('statusCode');
    should(lastStatus('n1')).equal('INVALID_INPUT: address is empty');
  });

  it('an uncaught error reaches the debug sidebar as Node-RED shows an Error: the one line, its code, code locations only', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }] });
    const logged = new Promise<unknown>((resolve) => helper.getNode('n1').once('call:error', (call: { args: unknown[] }) => resolve(call.args[0])));
    helper.getNode('n1').receive({ payload: '' });
    const { format, shown } = sidebarView(await logged);
    should(format).equal('error');
    const { data } = shown as { data: Fields };
    should(data).match({ name: 'InputError', message: "address is empty — fix the message or the node's settings", code: 'INVALID_INPUT' });
    should(String(data.stack).split('\n')[0]).equal("InputError: address is empty — fix the message or the node's settings");
  });

  /** Node `n1` of `type` with a Catch node and Node-RED's onComplete hook: what each of them got for one failed message. */
  async function caughtAndCompleted(msg: Fields, type = 'svc-geocode'): Promise<{ caught: Fields; completed: unknown; logged: unknown }> {
    await loadWithSandbox(ctx.sandbox, {
      types: [type],
      config: { dailyLimit: 0 },
      nodes: [
        { id: 'n1', type, wires: [[]] },
        { id: 'c1', type: 'catch', scope: null, uncaught: false, wires: [['out']] },
      ],
    });
    const completed = new Promise<unknown>((resolve) => {
      helper._RED.hooks.add('onComplete.errorReportSpec', (event) => {
        if ((event.node as { id?: string } | undefined)?.id !== 'n1') return;
        helper._RED.hooks.remove('onComplete.errorReportSpec');
        resolve(event.error);
      });
    });
    const logged = new Promise<unknown>((resolve) => helper.getNode('n1').once('call:error', (call: { args: unknown[] }) => resolve(call.args[0])));
    const caught = new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
    helper.getNode('n1').receive(msg);
    return { caught: await caught, completed: await completed, logged: await logged };
  }

  it('done(err) and node.error(err, msg) get an Error with code, message and stack; msg.error keeps its members (issue 51 point 8)', async function () {
    // A platform that repeats the key in its error body: nothing of it reaches the Error, its stack or msg.error.
    const key = SANDBOX_DEFAULTS.apiKey;
    ctx.sandbox.setFault('geocode', { status: 401, body: JSON.stringify({ error: 'unauthorized', message: `the key ${key} is refused` }) });
    const { caught, completed, logged } = await caughtAndCompleted({ payload: '12 Main Street' });
    const message = "svc-config 'sandbox': API key refused (401): check the API key and Project id fields";
    for (const err of [completed, logged]) {
      should(err).be.instanceOf(Error);
      const error = err as Error & Fields;
      should(error).match({ name: 'PlatformError', code: 'UNAUTHORIZED', statusCode: 401, message });
      should(String(error)).equal(message);
      should(error).not.have.property('cause');
      const [first, ...frames] = String(error.stack).split('\n');
      should(first).equal(`PlatformError: ${message}`);
      should(frames.length).be.above(0);
      for (const frame of frames) should(frame).match(/^\s+at /);
      should(String(error.stack)).not.containEql(key);
      should(JSON.stringify(error)).not.containEql(key);
    }
    should(completed).equal(logged);
    // What a Catch node gets is what it got before: message, source and code, no stack, no class name.
    const caughtError = caught.error as Fields;
    should(Object.keys(caughtError).sort()).eql(['code', 'message', 'source']);
    should(caughtError).match({ code: 'UNAUTHORIZED', message, source: { id: 'n1', type: 'svc-geocode' } });
    should(caught.statusCode).equal(401);
  });

  it('a failure with data from the service keeps it as cause, in the Error and in msg.error (issue 51 point 8)', async function () {
    // svc-topic: the sandbox responds to a topic it does not hold with 404 and an envelope whose isSuccess is false.
    const { caught, completed } = await caughtAndCompleted({ operation: 'get-topic', topicId: 404 }, 'svc-topic');
    should(completed).be.instanceOf(Error);
    const error = completed as Error & Fields;
    should(error).match({ name: 'PlatformError', code: 'NOT_FOUND', cause: '{"isSuccess":false,"data":null,"message":"topic 404 not found"}' });
    const caughtError = caught.error as Fields;
    should(Object.keys(caughtError).sort()).eql(['cause', 'code', 'message', 'source']);
    should(caughtError).match({ code: 'NOT_FOUND', cause: error.cause, message: error.message });
  });

  it('svc-webhook-in reports in the same shape: a code and one line with what to fix; its status names the setting (issue 29 point 6)', async function () {
    await helper.load([nodeModule('svc-webhook-in')], [{ id: 'w1', type: 'svc-webhook-in', url: '/error-shape', verify: 'signature', wires: [[]] }], {});
    const [reported] = (helper.getNode('w1').error as unknown as { getCalls(): Array<{ args: unknown[] }> }).getCalls().map((call) => call.args[0]);
    should(reported).match({ code: 'CONFIG_INVALID' });
    const { data } = sidebarView(reported).shown as { data: Fields };
    should(data.message).match(/^not listening: no secret is set: enter the SecretToken/);
    should(data.message).not.match(/fix the message/);
    should(lastStatus('w1')).equal('not listening: no secret set');
  });
});
