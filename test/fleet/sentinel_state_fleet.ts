import should from 'should';
import { SharedState } from '../../nodes/lib/state/shared-state';
import { english } from '../support/english';
import { SentinelDeployment, sharedStateConnections } from '../support/redis-deployments';
import { waitUntil } from '../support/wait';
import { requireDeploymentTools } from './fleet';

/**
 * The shared state's own connection on a real Sentinel deployment, without Node-RED: a failover that
 * lands while the connection is asking a Sentinel for the master. ioredis then ends the connection for
 * good (it does not ask its retry strategy); SharedState makes it again.
 */
describe('shared state on a Redis Sentinel deployment: the master dies while a Sentinel hangs', function () {
  this.timeout(120_000);
  let sentinel: SentinelDeployment;

  before(async function () {
    requireDeploymentTools();
    sentinel = await SentinelDeployment.start();
  });

  after(async function () {
    await sentinel?.remove();
  });

  it('two connections follow to the new master once a Sentinel that replies names it: one warning and one recovery each', async function () {
    const logs = [0, 1].map(() => ({ warnings: [] as string[], infos: [] as string[] }));
    const states = logs.map(
      ({ warnings, infos }) => new SharedState({ url: sentinel.url(), log: { warn: (t) => warnings.push(english(t)), info: (t) => infos.push(english(t)) } }),
    );
    const hung = sentinel.sentinels[0];
    try {
      for (const state of states) should(await state.connected()).be.true();
      const before = await sentinel.masterPort();
      // The Sentinel each connection asks first replies to nothing: its reconnections wait on it
      // (up to the connect timeout) while the other two fail over and announce it.
      hung.pause();
      await sentinel.server(before).stop();
      const after = await sentinel.switched(before, 30_000, sentinel.sentinels.slice(1));
      await waitUntil(() => states.every((state) => state.mode === 'shared'), 'both connections sharing state again', 30_000);
      should(await sharedStateConnections(after)).equal(2);
      await waitUntil(() => logs.every(({ infos }) => infos.length === 1), 'both to report shared state available again', 10_000);
      for (const { warnings, infos } of logs) {
        should(warnings).have.length(1);
        should(warnings[0]).match(/shared state unavailable \(Redis/);
        should(infos[0]).match(/shared state available again/);
      }
    } finally {
      hung.resume();
      for (const state of states) state.close();
    }
  });
});
