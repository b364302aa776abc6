import should from 'should';
import { JobState, Polling, computationReader, pollJob } from '../../../nodes/lib/platform/jobs';
import { MAX_PACED_WAIT_MS, pollDelay } from '../../../nodes/lib/platform/job-pacing';
import { Sandbox, startSandbox } from '../../../sandbox';
import { JOB_DURATIONS } from '../../../sandbox/job-clock';
import { ManualClock, onClock } from '../../support/clock';
import { clientFactory } from '../../support/platform-client';

/**
 * Polls paced by the job (issue 59 point 3): the real client against a sandbox whose jobs run by the
 * same clock the poller waits on, moved by hand, so a ten-minute job takes no real ten minutes.
 */
describe('polls paced by the job', function () {
  const clock = new ManualClock();
  const clients = clientFactory();
  let sandbox: Sandbox;
  /** An isoline of one range runs JOB_DURATIONS.isoline's base and one polygon; scaled, it runs ten minutes. */
  const TEN_MINUTES = 600_000;
  const oneRange = JOB_DURATIONS.isoline.baseMs + JOB_DURATIONS.isoline.perItemMs;
  const polling: Polling = { intervalMs: 1000, maxWaitMs: 3_600_000 };
  const isResult = (body: unknown) => typeof body === 'object' && body !== null && 'isoline' in body;

  before(async function () {
    sandbox = await startSandbox({ clock, jobTimeScale: TEN_MINUTES / oneRange });
  });
  afterEach(async function () {
    await clients.closeClients();
    sandbox.clearFaults();
    sandbox.log.splice(0);
  });
  after(async function () {
    await sandbox.close();
  });

  /** A new isoline job, accepted now by `clock`. */
  async function isolineJob(): Promise<JobState> {
    const accepted = await clients.create(sandbox).request<{ jobId: string }>({
      auth: 'project',
      rate: 'routing',
      method: 'POST',
      path: '/v1/routing/isoline',
      json: { async: true, origins: [{ type: 'coordinates', latitude: 52.52, longitude: 13.405 }], range: { type: 'time', value: 600 } },
      retry: 'read',
    });
    return { kind: 'isoline', jobId: accepted.body.jobId, statusPath: `/v1/routing/isoline/jobs/${accepted.body.jobId}`, createdAt: clock.now(), polls: 0 };
  }

  /** Polls `job` to its result on the clock; the times of its status requests, from its creation (one per request the sandbox had). */
  async function pollTimes(job: JobState): Promise<number[]> {
    const times: number[] = [];
    const context = { signal: new AbortController().signal, onWait: () => undefined, onPoll: () => void times.push(clock.now() - job.createdAt), clock };
    const polled = await onClock(clock, pollJob(clients.create(sandbox), job, computationReader(isResult), polling, context));
    should(isResult(polled.result)).be.true();
    should(sandbox.requests('isoline-job')).have.length(times.length);
    return times;
  }

  const gaps = (times: number[]) => times.map((time, i) => time - (i === 0 ? 0 : times[i - 1]));

  it('polls a ten-minute job 29 times, not 600: the interval while it is young, then a quarter of its age, at most 60 s apart', async function () {
    const times = await pollTimes(await isolineJob());
    // Polled every second for ten minutes, it would have made 600 requests.
    should(times).have.length(29);
    const waits = gaps(times);
    should(waits.slice(0, 4)).eql([1000, 1000, 1000, 1000]);
    should(Math.max(...waits)).equal(MAX_PACED_WAIT_MS);
    // Each wait is a quarter of the job's age when it began (or the interval, or the cap).
    for (let i = 1; i < times.length; i++) should(waits[i]).be.approximately(Math.max(1000, Math.min(MAX_PACED_WAIT_MS, times[i - 1] / 4)), 0.001);
    // The result is seen at most one wait after the job completed.
    should(times[times.length - 1]).be.within(TEN_MINUTES, TEN_MINUTES + MAX_PACED_WAIT_MS);
  });

  it('follows the Retry-After of a status response for the next wait, then paces by age again', async function () {
    const running = JSON.stringify({ status: 'running', message: 'queued' });
    sandbox.setFault('isoline-job', { status: 200, body: running, retryAfter: '90', times: 2 });
    const times = await pollTimes(await isolineJob());
    const waits = gaps(times);
    // The first poll at the interval; its response and the next ask for 90 s each.
    should(waits.slice(0, 3)).eql([1000, 90_000, 90_000]);
    // Then a quarter of the job's age (181 s), and so on.
    should(waits[3]).equal(Math.min(MAX_PACED_WAIT_MS, times[2] / 4));
  });

  it('holds at most 16 status requests at the rate gate however many jobs are due; the others wait their turn, and stop with their signal', async function () {
    const client = clients.create(sandbox, { ratePerMinute: 6000 });
    const gate = client.gateFor('routing');
    const job = await isolineJob();
    const controller = new AbortController();
    const context = { signal: controller.signal, onWait: () => undefined };
    // 200 jobs due every 10 ms, against a rate of one request per 10 ms: far more polls are due than the rate lets go.
    const polls = Array.from({ length: 200 }, () =>
      pollJob(client, { ...job, createdAt: Date.now() }, computationReader(isResult), { intervalMs: 10, maxWaitMs: 60_000 }, context).then(
        () => 'finished',
        (err: { code?: string }) => err.code,
      ),
    );
    let mostQueued = 0;
    const startedAt = Date.now();
    while (Date.now() - startedAt < 1000) {
      mostQueued = Math.max(mostQueued, gate.waiting);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    should(mostQueued).be.within(1, 16);
    should(sandbox.requests('isoline-job').length).be.above(50);
    controller.abort();
    should(await Promise.all(polls)).eql(Array.from({ length: 200 }, () => 'CANCELLED'));
  });

  it('pollDelay: the interval first, a quarter of the age up to 60 s, a Retry-After never below the interval', function () {
    should([0, 2000, 4000, 8000, 100_000, 240_000, 3_600_000].map((age) => pollDelay(1000, age))).eql([1000, 1000, 1000, 2000, 25_000, 60_000, 60_000]);
    should(pollDelay(1000, 3_600_000, 120_000)).equal(120_000);
    should(pollDelay(1000, 3_600_000, 0)).equal(1000);
    // A configured interval longer than 60 s is kept.
    should(pollDelay(90_000, 3_600_000)).equal(90_000);
  });
});
