import should from 'should';
import { getEventListeners } from 'node:events';
import { whenAborted } from '../../../nodes/lib/util/async';

describe('whenAborted', function () {
  it('calls each callback once at the abort, except those removed, with one listener on the signal however many wait', function () {
    const controller = new AbortController();
    const calls: string[] = [];
    const callback = () => calls.push('twice');
    const stops = Array.from({ length: 100 }, (_v, i) => whenAborted(controller.signal, () => calls.push(String(i))));
    whenAborted(controller.signal, callback);
    whenAborted(controller.signal, callback);
    for (const stop of stops.slice(1)) stop();
    should(getEventListeners(controller.signal, 'abort')).have.length(1);
    controller.abort();
    controller.abort();
    should(calls).eql(['0', 'twice', 'twice']);
  });

  it('calls nothing for a signal aborted already, as addEventListener would not, and a failing callback keeps the others', async function () {
    const calls: string[] = [];
    const stop = whenAborted(AbortSignal.abort(), () => calls.push('late'));
    stop();
    const controller = new AbortController();
    whenAborted(controller.signal, () => {
      throw new Error('a failing callback');
    });
    whenAborted(controller.signal, () => calls.push('after'));
    const reported = new Promise<Error>((resolve) => {
      const listeners = process.listeners('uncaughtException');
      process.removeAllListeners('uncaughtException');
      process.once('uncaughtException', (err) => {
        for (const listener of listeners) process.on('uncaughtException', listener);
        resolve(err);
      });
    });
    controller.abort();
    should(calls).eql(['after']);
    should((await reported).message).equal('a failing callback');
  });
});
