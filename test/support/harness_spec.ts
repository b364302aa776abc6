import should from 'should';
import type { NodeAPI, Node, NodeDef, NodeMessageInFlow } from 'node-red';
import { helper, sendAndCollect, sendAndWait } from './harness';

type Behaviour = (msg: NodeMessageInFlow, send: (msg: NodeMessageInFlow) => void, done: (err?: Error) => void) => void;

/** A node type whose input handler is `behaviour`: the harness's own checks are tested on it. */
function nodeThat(behaviour: Behaviour) {
  return (RED: NodeAPI) => {
    RED.nodes.registerType('harness-probe', function (this: Node, def: NodeDef) {
      RED.nodes.createNode(this, def);
      this.on('input', (msg, send, done) => behaviour(msg, send, done));
    });
  };
}

async function loadProbe(behaviour: Behaviour): Promise<void> {
  await helper.load(
    [nodeThat(behaviour)],
    [
      { id: 'probe', type: 'harness-probe', wires: [['out']] },
      { id: 'out', type: 'helper' },
    ],
  );
}

describe('test harness: one outcome per message', function () {
  afterEach(() => helper.unload());

  it('resolves with the one output of a node that sends once and calls done()', async function () {
    await loadProbe((msg, send, done) => (send(msg), done()));
    const outcome = await sendAndWait('probe', { payload: 1 });
    should(outcome.kind).equal('output');
  });

  it('resolves with the error of a node that calls done(err) without sending', async function () {
    await loadProbe((_msg, _send, done) => done(new Error('refused')));
    const outcome = await sendAndWait('probe', { payload: 1 });
    should(outcome.kind).equal('error');
  });

  it('rejects a node that both sends and reports an error for one message', async function () {
    await loadProbe((msg, send, done) => (send(msg), done(new Error('and failed'))));
    await should(sendAndWait('probe', { payload: 1 })).be.rejectedWith(/both sent 1 message\(s\) and reported an error/);
  });

  it('rejects a node that sends twice, or calls done() with no output', async function () {
    await loadProbe((msg, send, done) => (send(msg), send(msg), done()));
    await should(sendAndWait('probe', { payload: 1 })).be.rejectedWith(/sent 2 messages/);
    await helper.unload();
    await loadProbe((_msg, _send, done) => done());
    await should(sendAndWait('probe', { payload: 1 })).be.rejectedWith(/sent 0 messages/);
  });

  it('rejects a node that never calls done, even after sending', async function () {
    await loadProbe((msg, send) => send(msg));
    await should(sendAndWait('probe', { payload: 1 }, 200)).be.rejectedWith(/did not call done\(\)/);
  });

  it('collects every message of a node that sends several and then calls done() once', async function () {
    await loadProbe((msg, send, done) => {
      for (let i = 0; i < 3; i++) send({ ...msg, payload: i });
      setImmediate(() => done());
    });
    const { outputs, error } = await sendAndCollect('probe', { payload: 'x' });
    should(outputs.map((m) => m.payload)).eql([0, 1, 2]);
    should(error).be.undefined();
  });
});
