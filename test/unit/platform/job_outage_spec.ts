import should from 'should';
import type { WaitEvent } from '../../../nodes/lib/platform/types';
import { JobState, PollContext, Polling, computationReader, pollJob } from '../../../nodes/lib/platform/jobs';
import { outageDelay } from '../../../nodes/lib/platform/job-pacing';
import { bulkResult, uploadBatch } from '../../../nodes/lib/platform/bulk';
import { PlatformError, SvcError } from '../../../nodes/lib/util/errors';
import type { Fault } from '../../../sandbox';
import { ManualClock, onClock } from '../../support/clock';
import { clientSuite, rejectionOf } from '../../support/platform-client';

/**
 * An accepted job is polled to its deadline through a platform outage: the real client against the
 * sandbox (503s and reset connections), the poller's waits on a clock moved by hand, so a minute of
 * outage takes no real minute.
 */
describe('an accepted job through a platform outage', function () {
  const suite = clientSuite();
  const polling: Polling = { intervalMs: 500, maxWaitMs: 120_000 };

  /** A new isoline job in the sandbox, accepted now by `clock`. */
  async function isolineJob(clock: ManualClock, createdAt = clock.now()): Promise<JobState> {
    const client = suite.clients.create(suite.sandbox, { maxRetries: 0 });
    const accepted = await client.request<{ jobId: string }>({
      auth: 'project',
      rate: 'routing',
      method: 'POST',
      path: '/v1/routing/isoline',
      json: { async: true, origins: [{ type: 'coordinates', latitude: 52.52, longitude: 13.405 }], range: { type: 'time', value: 600 } },
      retry: 'read',
    });
    return { kind: 'isoline', jobId: accepted.body.jobId, statusPath: `/v1/routing/isoline/jobs/${accepted.body.jobId}`, createdAt, polls: 0 };
  }

  /** From now until `ms` later by `clock`, every request gets a 503 response or has its connection reset, in turn. */
  function outage(clock: ManualClock, ms: number, endpoints?: string[]): void {
    const ends = clock.now() + ms;
    let turn = 0;
    const pick = (endpoint: string): Fault | undefined => {
      if (clock.now() >= ends || (endpoints && !endpoints.includes(endpoint))) return undefined;
      return turn++ % 2 === 0 ? { status: 503 } : { reset: true };
    };
    suite.sandbox.setFault('*', { pick });
  }

  function context(clock: ManualClock, waits: Array<WaitEvent & { at: number }>): PollContext {
    return { signal: new AbortController().signal, onWait: (event) => waits.push({ ...event, at: clock.now() }), clock };
  }

  const isResult = (body: unknown) => typeof body === 'object' && body !== null && 'isoline' in body;

  it('waits out a minute of 503s and resets with growing waits (1 s, doubling, at most the longest poll interval) and delivers the result', async function () {
    const clock = new ManualClock();
    const job = await isolineJob(clock);
    const client = suite.clients.create(suite.sandbox, { maxRetries: 0 });
    outage(clock, 60_000);
    const waits: Array<WaitEvent & { at: number }> = [];
    const polled = await onClock(clock, pollJob(client, job, computationReader(isResult), polling, context(clock, waits)));
    should(isResult(polled.result)).be.true();
    const outageWaits = waits.filter((event) => event.kind === 'outage');
    should(outageWaits.map((event) => event.delayMs)).eql([1000, 2000, 4000, 8000, 10_000, 10_000, 10_000, 10_000, 10_000]);
    should(outageWaits.map((event) => (event as { reason: string }).reason)).containDeep(['SERVER', 'NETWORK']);
    // The first response after the outage, then the sandbox's polls to the result, a quarter of the job's age apart.
    should(clock.now() - job.createdAt).be.within(60_000, 60_000 + 10_000 + 3 * 30_000);
    should(job.polls).equal(suite.sandbox.options.jobPolls);
  });

  it('a job resumed from its stored state keeps its deadline: an outage past it ends the job with TIMEOUT at the deadline, naming the last failure', async function () {
    const clock = new ManualClock();
    // Accepted 100 s ago (before a restart): 20 s of its 120 s are left.
    const job = await isolineJob(clock, clock.now() - 100_000);
    const client = suite.clients.create(suite.sandbox, { maxRetries: 0 });
    outage(clock, 60_000);
    const error = await rejectionOf(onClock(clock, pollJob(client, job, computationReader(isResult), polling, context(clock, []))));
    should(error.code).equal('TIMEOUT');
    should(clock.now()).equal(job.createdAt + polling.maxWaitMs);
    should(error.message).match(/gave no result within 120 s \(last failure: /);
  });

  it('a refused credential, a 404 for the job or another 4xx ends the job at once', async function () {
    for (const [fault, code] of [
      [{ status: 401 }, 'UNAUTHORIZED'],
      [{ status: 403 }, 'FORBIDDEN'],
      [{ status: 404 }, 'NOT_FOUND'],
      [{ status: 400 }, 'BAD_REQUEST'],
    ] as const) {
      const clock = new ManualClock();
      const job = await isolineJob(clock);
      const client = suite.clients.create(suite.sandbox, { maxRetries: 0 });
      suite.sandbox.setFault('isoline-job', fault);
      const waits: Array<WaitEvent & { at: number }> = [];
      const error = await rejectionOf(onClock(clock, pollJob(client, job, computationReader(isResult), polling, context(clock, waits))));
      suite.sandbox.clearFaults();
      should(error.code).equal(code);
      should(waits).eql([]);
      // One poll wait, then the response that ends it.
      should(clock.now() - job.createdAt).equal(polling.intervalMs);
    }
  });

  it('a bulk job whose status polls and result download meet an outage is downloaded once the platform responds again', async function () {
    const clock = new ManualClock();
    const client = suite.clients.create(suite.sandbox, { maxRetries: 0 });
    const protocol = { jobIdPath: '', downloadPath: '', statusPath: '', polling };
    const addresses = ['1 Outage Road', '2 Outage Road'];
    const waits: Array<WaitEvent & { at: number }> = [];
    const ctx = context(clock, waits);
    const job = await uploadBatch(client, protocol, { batch: 0, firstIndex: 0, lastIndex: 1, addresses }, ctx);
    job.createdAt = clock.now();
    // Status polls fail for 30 s; then, once the job is done, its download fails for 30 s more.
    outage(clock, 30_000, ['bulk-status']);
    let downloadOutage = false;
    const result = bulkResult(client, protocol, job, addresses, {
      ...ctx,
      onPoll: (state) => {
        if (state.status === 'completed' && !downloadOutage) {
          downloadOutage = true;
          outage(clock, 30_000, ['bulk-download']);
        }
      },
    });
    const { records } = await onClock(clock, result);
    should(records).have.length(2);
    should(downloadOutage).be.true();
    const downloads = suite.sandbox.requests('bulk-download');
    should(downloads.filter((request) => request.status === 200)).have.length(1);
    should(downloads.length).be.above(3);
    should(waits.filter((event) => event.kind === 'outage').length).be.above(8);
    should(clock.now() - job.createdAt).be.above(60_000);
  });

  it('outageDelay: the failures that pass, a 429 waits at least its Retry-After, the rest end the job', function () {
    const error = (code: SvcError['code'], retryAfterMs?: number) => new PlatformError(code, 'x', { retryAfterMs });
    should([1, 2, 3, 4, 5, 9].map((failures) => outageDelay(error('SERVER'), failures, polling))).eql([1000, 2000, 4000, 8000, 10_000, 10_000]);
    should(outageDelay(error('NETWORK'), 1, { ...polling, maxIntervalMs: 30_000 })).equal(1000);
    should(outageDelay(error('TIMEOUT'), 6, { ...polling, maxIntervalMs: 30_000 })).equal(30_000);
    should(outageDelay(error('RATE_LIMITED', 45_000), 1, polling)).equal(45_000);
    for (const code of ['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_REQUEST', 'BAD_RESPONSE', 'TLS', 'JOB_FAILED', 'CANCELLED'] as const) {
      should(outageDelay(error(code), 1, polling)).be.undefined();
    }
    should(outageDelay(new Error('not a platform error'), 1, polling)).be.undefined();
  });
});
