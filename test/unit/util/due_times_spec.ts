import should from 'should';
import { DueTimes } from '../../../nodes/lib/util/due-times';
import { ManualClock } from '../../support/clock';

/** Many timers on one: the heap of due times every job's next poll waits in. */
describe('DueTimes', function () {
  it('fires 10,000 timers in the order of their due times (then of setting) on one timer of the clock', async function () {
    const clock = new ManualClock();
    const timers = new DueTimes(clock);
    const fired: number[] = [];
    const delays = Array.from({ length: 10_000 }, (_, i) => ((i * 7919) % 5000) + 1);
    delays.forEach((ms, i) => timers.setTimer(() => fired.push(i), ms));
    should(clock.pendingTimers).equal(1);
    should(timers.size).equal(10_000);
    await clock.advance(2500);
    should(fired.length).be.above(4000);
    await clock.advance(2500);
    should(fired).have.length(10_000);
    const order = delays.map((ms, i) => ({ ms, i })).sort((a, b) => a.ms - b.ms || a.i - b.i);
    should(fired).eql(order.map(({ i }) => i));
    should(clock.pendingTimers).equal(0);
  });

  it('never fires a cleared timer, re-arms for an earlier one, and keeps no timer once none is left', async function () {
    const clock = new ManualClock();
    const timers = new DueTimes(clock);
    const fired: string[] = [];
    const late = timers.setTimer(() => fired.push('late'), 1000);
    timers.setTimer(() => fired.push('early'), 10);
    should(clock.nextTimerIn()).equal(10);
    const cleared = Array.from({ length: 500 }, () => timers.setTimer(() => fired.push('cleared'), 50));
    for (const timer of cleared) timers.clearTimer(timer);
    should(timers.size).equal(2);
    await clock.advance(100);
    should(fired).eql(['early']);
    timers.clearTimer(late);
    timers.clearTimer(late);
    should(timers.size).equal(0);
    should(clock.pendingTimers).equal(0);
    await clock.advance(2000);
    should(fired).eql(['early']);
  });

  it('tells when the earliest live timer is due, a cleared one skipped, none once none is left', async function () {
    const clock = new ManualClock();
    const timers = new DueTimes(clock);
    should(timers.nextDueAt()).be.undefined();
    const first = timers.setTimer(() => undefined, 40);
    timers.setTimer(() => undefined, 100);
    should(timers.nextDueAt()).equal(clock.now() + 40);
    timers.clearTimer(first);
    should(timers.nextDueAt()).equal(clock.now() + 100);
    await clock.advance(100);
    should(timers.nextDueAt()).be.undefined();
  });
});
