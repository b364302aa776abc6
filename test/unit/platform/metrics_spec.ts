import should from 'should';
import {
  ClientMetrics,
  Emit,
  Histogram,
  METRICS,
  MetricsRegistry,
  emitHistogram,
  endpointFamily,
  escapeLabelValue,
  outcomeOf,
} from '../../../nodes/lib/platform/metrics';
import { SANDBOX_DEFAULTS } from '../../../sandbox';
import { clientSuite, geocode, rejectionOf } from '../../support/platform-client';
import { computationReader, pollJob } from '../../../nodes/lib/platform/jobs';
import { waitUntil } from '../../support/wait';
import { parseExposition, valueOf } from '../../support/prometheus';

/**
 * Issue 55, metrics: the registry's text format (read back by a strict parser), the endpoint
 * families, and what a real client against the sandbox counts: outcomes, retries, 429s, queue waits,
 * token refreshes.
 */

describe('metrics', function () {
  describe('the text format', function () {
    it('writes each metric once with HELP and TYPE, its samples together, label values escaped, histograms cumulative', function () {
      const registry = new MetricsRegistry();
      const histogram = new Histogram([0.1, 1]);
      for (const value of [0, 0.5, 0.5, 3]) histogram.observe(value);
      const source = (id: string, name: string) => ({
        collect(emit: Emit) {
          emit('svc_location_requests_total', { config_id: id, config_name: name, family: 'geocode', outcome: '2xx' }, 3);
          emitHistogram(emit, 'svc_location_queue_wait_seconds', { config_id: id, queue: 'geocode' }, histogram);
          emit('svc_location_daily_limit', { config_id: id }, 50000);
        },
      });
      registry.add('a', source('a', 'plain'));
      const remove = registry.add('b', source('b', 'with "quotes", a \\ and\na line feed'));
      const text = registry.render();
      const parsed = parseExposition(text);
      should([...parsed.types.keys()]).eql(Object.keys(METRICS));
      should(valueOf(parsed, 'svc_location_requests_total', { config_id: 'b' })).equal(3);
      should(parsed.samples.find((s) => s.labels.config_id === 'b')?.labels.config_name).equal('with "quotes", a \\ and\na line feed');
      should(valueOf(parsed, 'svc_location_queue_wait_seconds_bucket', { config_id: 'a', le: '0.1' })).equal(1);
      should(valueOf(parsed, 'svc_location_queue_wait_seconds_bucket', { config_id: 'a', le: '1' })).equal(3);
      should(valueOf(parsed, 'svc_location_queue_wait_seconds_bucket', { config_id: 'a', le: '+Inf' })).equal(4);
      should(valueOf(parsed, 'svc_location_queue_wait_seconds_sum', { config_id: 'a' })).equal(4);
      remove();
      should(parseExposition(registry.render()).samples.some((s) => s.labels.config_id === 'b')).be.false();
    });

    it('escapes only backslash, double quote and line feed', function () {
      should(escapeLabelValue('a\\b"c\nd\te')).equal('a\\\\b\\"c\\nd\te');
    });

    it('names every metric by the conventions: svc_location_ prefix, counters in _total, units in names', function () {
      for (const [name, { type }] of Object.entries(METRICS)) {
        should(name).match(/^svc_location_[a-z_]+$/);
        if (type === 'counter') should(name).endWith('_total');
        else should(name).not.endWith('_total');
      }
    });
  });

  describe('endpoint families and outcomes', function () {
    it('tells isoline and sequence from standard routing by path, topics as pubsub', function () {
      should(endpointFamily({ rate: 'routing', path: '/v1/routing/isoline/jobs/7' })).equal('isoline');
      should(endpointFamily({ rate: 'routing', path: '/v1/routing/sequence/p' })).equal('sequence');
      should(endpointFamily({ rate: 'routing', path: '/v1/routing' })).equal('routing');
      should(endpointFamily({ rate: 'topics', path: '/v1/pubsub/topics' })).equal('pubsub');
      should(endpointFamily({ rate: 'bulk' })).equal('bulk');
      should(outcomeOf(201, '')).equal('2xx');
      should(outcomeOf(404, 'NOT_FOUND')).equal('4xx');
      should(outcomeOf(undefined, 'TIMEOUT')).equal('TIMEOUT');
    });

    it('counts jobs in flight by kind, down again when each ends', function () {
      const metrics = new ClientMetrics();
      const first = metrics.jobStarted('isoline');
      const second = metrics.jobStarted('isoline');
      should(metrics.jobsInFlight.get('isoline')).equal(2);
      first();
      second();
      should(metrics.jobsInFlight.get('isoline')).equal(0);
    });
  });

  describe('a client against the sandbox', function () {
    const suite = clientSuite();

    it('counts outcomes, retries and 429s per family, and a queue wait per request', async function () {
      const client = suite.clients.create(suite.sandbox);
      await client.request(geocode());
      suite.sandbox.setFault('geocode', { status: 429, retryAfter: '0', times: 1 });
      await client.request(geocode());
      suite.sandbox.setFault('geocode', { status: 500 });
      const error = await rejectionOf(client.request(geocode({ retry: 'create' })));
      should(error.code).equal('SERVER');
      suite.sandbox.clearFaults();
      const geocodes = client.metrics.families.get('geocode');
      should(Object.fromEntries(geocodes?.outcomes ?? [])).eql({ '2xx': 2, '5xx': 1 });
      should(geocodes?.retries).equal(1);
      should(geocodes?.rateLimited).equal(1);
      // One queue for every family without per-family rates: 'all'.
      should(client.metrics.queueWait.get('all')?.count).equal(4);
    });

    it('counts an isoline job in flight while it is polled, and the isoline family apart from routing', async function () {
      const client = suite.clients.create(suite.sandbox);
      const accepted = await client.request<{ jobId: string }>({
        auth: 'project',
        rate: 'routing',
        method: 'POST',
        path: '/v1/routing/isoline',
        json: { async: true, origins: [{ type: 'coordinates', latitude: 52.52, longitude: 13.405 }], range: { type: 'time', value: 600 } },
        retry: 'read',
      });
      const job = {
        kind: 'isoline',
        jobId: accepted.body.jobId,
        statusPath: `/v1/routing/isoline/jobs/${accepted.body.jobId}`,
        createdAt: Date.now(),
        polls: 0,
      } as const;
      const isResult = (body: unknown) => typeof body === 'object' && body !== null && 'isoline' in body;
      const polled = pollJob(
        client,
        job,
        computationReader(isResult),
        { intervalMs: 50, maxWaitMs: 10_000 },
        { signal: new AbortController().signal, onWait: () => undefined },
      );
      should(client.metrics.jobsInFlight.get('isoline')).equal(1);
      await polled;
      should(client.metrics.jobsInFlight.get('isoline')).equal(0);
      await waitUntil(() => (client.metrics.families.get('isoline')?.outcomes.get('2xx') ?? 0) >= 2, 'the isoline requests counted');
      should(client.metrics.families.get('routing')?.outcomes.size).equal(0);
    });

    it('counts a token fetch as the token family, its age from then, and a refused key by error code when nothing was sent', async function () {
      const client = suite.clients.create(suite.sandbox);
      await client.tokens.getToken();
      should(client.tokens.refreshes).equal(1);
      should(client.tokens.failing).be.false();
      should(client.tokens.issuedAt).be.above(0);
      should(Object.fromEntries(client.metrics.families.get('token')?.outcomes ?? [])).eql({ '2xx': 1 });
      const refused = suite.clients.create(suite.sandbox, { credentials: { clientId: SANDBOX_DEFAULTS.clientId, clientSecret: 'wrong' } });
      await rejectionOf(refused.tokens.getToken());
      should(refused.tokens.failing).be.true();
      should(Object.fromEntries(refused.metrics.families.get('token')?.outcomes ?? [])).eql({ '4xx': 1 });
      const invalid = suite.clients.create(suite.sandbox, { baseUrl: 'not a url' });
      await rejectionOf(invalid.request(geocode()));
      should(Object.fromEntries(invalid.metrics.families.get('geocode')?.outcomes ?? [])).eql({ CONFIG_INVALID: 1 });
    });
  });
});
