import should from 'should';
import { CircuitBreaker } from '../../../nodes/lib/state/breaker';
import { ManualClock } from '../../support/clock';
import { settle } from '../../support/wait';

/**
 * The circuit breaker behind shared state (a hung Redis is an unavailable Redis), on a clock moved
 * by hand: no real waits.
 */
describe('circuit breaker', function () {
  /** A breaker whose probe replies as `replies` says, recording when each probe ran. */
  function breakerWith(replies: () => boolean) {
    const clock = new ManualClock();
    const probes: number[] = [];
    let recoveries = 0;
    const breaker = new CircuitBreaker({
      probe: async () => {
        probes.push(clock.now());
        return replies();
      },
      onRecovered: () => recoveries++,
      probeDelayMs: 200,
      maxProbeDelayMs: 2000,
      clock,
    });
    return { clock, breaker, probes, recoveries: () => recoveries };
  }

  it('a trip ends every pending call at once; their late replies and errors are ignored', async function () {
    const { breaker } = breakerWith(() => false);
    let reply: (value: string) => void = () => undefined;
    let fail: (err: Error) => void = () => undefined;
    const slow = breaker.race(new Promise<string>((resolve) => (reply = resolve)));
    const failing = breaker.race(new Promise<string>((_resolve, reject) => (fail = reject)));
    const settled: unknown[] = [];
    for (const call of [slow, failing])
      call.then(
        (outcome) => settled.push(outcome),
        (err: unknown) => settled.push(err),
      );
    await settle();
    should(settled).eql([]);
    breaker.trip();
    await settle();
    should(settled).eql([undefined, undefined]);
    should(breaker.isOpen).be.true();
    reply('late');
    fail(new Error('late failure'));
    await settle();
    should(await slow).be.undefined();
    should(await failing).be.undefined();
    breaker.stop();
  });

  it('while closed, a call resolves with its value or rejects with its error', async function () {
    const { breaker } = breakerWith(() => true);
    should(await breaker.race(Promise.resolve(42))).eql({ value: 42 });
    await should(breaker.race(Promise.reject(new Error('WRONGTYPE')))).be.rejectedWith('WRONGTYPE');
    should(breaker.isOpen).be.false();
  });

  it('probes after a growing delay, capped, until one succeeds; then closes and reports the recovery once', async function () {
    let replying = false;
    const { clock, breaker, probes, recoveries } = breakerWith(() => replying);
    const start = clock.now();
    breaker.trip();
    breaker.trip();
    await clock.advance(10_000);
    // 200, 400, 800, 1600, then every 2000 ms: 200, 600, 1400, 3000, 5000, 7000, 9000.
    should(probes.map((at) => at - start)).eql([200, 600, 1400, 3000, 5000, 7000, 9000]);
    should(breaker.isOpen).be.true();
    replying = true;
    await clock.advance(2000);
    should(probes).have.length(8);
    should(breaker.isOpen).be.false();
    should(recoveries()).equal(1);
    await clock.advance(10_000);
    should(probes).have.length(8);
    should(clock.pendingTimers).equal(0);
  });

  it('a new outage probes from the shortest delay again; reset and stop end the probing', async function () {
    const { clock, breaker, probes } = breakerWith(() => false);
    breaker.trip();
    await clock.advance(5000);
    breaker.reset();
    should(clock.pendingTimers).equal(0);
    const again = clock.now();
    breaker.trip();
    await clock.advance(700);
    should(probes.slice(-2).map((at) => at - again)).eql([200, 600]);
    breaker.stop();
    should(clock.pendingTimers).equal(0);
    breaker.trip();
    should(breaker.isOpen).be.false();
    should(clock.pendingTimers).equal(0);
  });

  it('a probe that throws counts as no reply', async function () {
    const clock = new ManualClock();
    let calls = 0;
    const breaker = new CircuitBreaker({
      probe: () => {
        calls++;
        return Promise.reject(new Error('Connection is closed.'));
      },
      onRecovered: () => should.fail(undefined, undefined, 'no recovery'),
      probeDelayMs: 100,
      maxProbeDelayMs: 100,
      clock,
    });
    breaker.trip();
    await clock.advance(550);
    should(calls).equal(5);
    should(breaker.isOpen).be.true();
    breaker.stop();
  });
});
