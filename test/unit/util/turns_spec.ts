import should from 'should';
import { Turns } from '../../../nodes/lib/util/turns';
import { SvcError } from '../../../nodes/lib/util/errors';

/** A task that ends when the test says so. */
function pending(log: number[], id: number): { task: () => Promise<number>; end: () => void } {
  let end = () => undefined as void;
  const task = () => {
    log.push(id);
    return new Promise<number>((resolve) => {
      end = () => resolve(id);
    });
  };
  return { task, end: () => end() };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** The turns job status requests take before they queue for a rate slot (jobs.ts). */
describe('Turns', function () {
  it('runs at most its limit at once and the rest in order of arrival, 3,000 of them', async function () {
    const turns = new Turns(4);
    const started: number[] = [];
    const tasks = Array.from({ length: 3000 }, (_, id) => pending(started, id));
    const results = tasks.map(({ task }) => turns.run(undefined, task));
    await settle();
    should(started).eql([0, 1, 2, 3]);
    should(turns.waiting).equal(2996);
    for (let id = 0; id < 3000; id++) {
      tasks[id].end();
      await settle();
      should(started.length).equal(Math.min(3000, id + 5));
    }
    should(await Promise.all(results)).eql(started);
    should(started).eql(Array.from({ length: 3000 }, (_, id) => id));
    should(turns.waiting).equal(0);
  });

  it('ends a waiting task as CANCELLED when its signal aborts, never starting it, and passes failures on', async function () {
    const turns = new Turns(1);
    const started: number[] = [];
    const first = pending(started, 1);
    const firstResult = turns.run(undefined, first.task);
    const controller = new AbortController();
    const cancelledOne = turns.run(controller.signal, pending(started, 2).task);
    const failing = turns.run(undefined, () => Promise.reject(new Error('refused')));
    const thrown = turns.run(undefined, () => {
      throw new Error('thrown');
    });
    controller.abort();
    const error = await cancelledOne.then(
      () => undefined,
      (err: unknown) => err,
    );
    should(error).be.instanceOf(SvcError).with.property('code', 'CANCELLED');
    first.end();
    should(await firstResult).equal(1);
    await should(failing).be.rejectedWith('refused');
    await should(thrown).be.rejectedWith('thrown');
    should(started).eql([1]);
    should(turns.waiting).equal(0);
  });
});
