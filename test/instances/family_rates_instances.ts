import should from 'should';
import { startSandbox, Sandbox } from '../../sandbox';
import { addTopic } from '../../sandbox/pubsub-state';
import { RedisServer } from '../support/redis-server';
import { NodeRedProcess } from '../support/node-red-process';
import { busiestWindow, promisedBusiest, promisedRate } from '../bench/measure';
import { CONFIG_ID, Cluster, FlowNode, geocodeThrough, sharedFlows, showLogsOnFailure } from './cluster';

/**
 * Issue 28 point 1 across instances: two real Node-RED processes on one real redis-server, each
 * publishing to a topic (topics rate) beside geocoding (single-geocode rate) on one config node with a
 * rate per endpoint family. Each family keeps one schedule for both instances (`rate:<scope>:topics`
 * beside the geocodes' `rate:<scope>`), and the publishes never wait on the geocode schedule.
 */

const GEOCODE_RATE = 60;
const TOPICS_RATE = 120;
/** Per instance: 24 publishes in all, about 11.5 s at the shared topics rate (about 6 s if each instance kept its own). */
const PUBLISHES = 12;
/** Per instance: 12 geocodes in all, about 11 s at the shared geocode rate. */
const GEOCODES = 6;

/** sharedFlows with rates per family, and `POST /publish` → svc-topic-publish (topic `topicId`, msg.payload) → the response. */
function familyFlows(sandboxUrl: string, redisUrl: string, topicId: number): FlowNode[] {
  const flows = sharedFlows({ sandboxUrl, redisUrl, rateLimit: GEOCODE_RATE }).map((node) =>
    node.id === CONFIG_ID ? { ...node, version: 2, rateScope: 'family', rateTopics: TOPICS_RATE } : node,
  );
  return [
    ...flows,
    { id: 'publish-in', type: 'http in', z: 'tab', url: '/publish', method: 'post', x: 100, y: 200, wires: [['publish']] },
    {
      id: 'publish',
      type: 'svc-topic-publish',
      z: 'tab',
      server: CONFIG_ID,
      topicId: String(topicId),
      topicIdType: 'num',
      locationId: 'cell-1',
      locationIdType: 'str',
      data: 'payload',
      dataType: 'msg',
      x: 250,
      y: 200,
      wires: [['publish-response']],
    },
    { id: 'publish-response', type: 'http response', z: 'tab', x: 400, y: 200, wires: [] },
  ];
}

async function publishThrough(instance: NodeRedProcess, reading: Record<string, unknown>): Promise<number> {
  const response = await fetch(`${instance.url}publish`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(reading),
    signal: AbortSignal.timeout(90_000),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('rates per endpoint family shared by several Node-RED instances through Redis', function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let redis: RedisServer;
  let cluster: Cluster;

  before(async function () {
    if (!RedisServer.available()) throw new Error('redis-server is not installed: apt-get install -y redis-server (.ci/run does it)');
    sandbox = await startSandbox();
    redis = await RedisServer.start();
    cluster = await Cluster.start(2);
  });

  after(async function () {
    await cluster?.stop();
    await redis?.remove();
    await sandbox?.close();
  });

  showLogsOnFailure(() => cluster, 40);

  it(`publishes keep the topics rate (${TOPICS_RATE}/min) and geocodes theirs (${GEOCODE_RATE}/min) across both instances, publishes never waiting on the geocodes`, async function () {
    const topicId = addTopic(sandbox, 'positions').id;
    await cluster.deploy(familyFlows(sandbox.url, redis.url, topicId));
    const instances = cluster.instances;
    // One of each through each instance first: a first request fetches a token and opens a connection after its slot.
    for (const instance of instances) {
      should(await publishThrough(instance, { warmUp: true })).equal(200);
      should((await geocodeThrough(instance, 'Warm-up Road')).status).equal(200);
    }
    const published = () => sandbox.requests('topic-publish').map((r) => r.time);
    const geocoded = () => sandbox.requests('geocode').map((r) => r.time);
    const [publishesBefore, geocodesBefore] = [published().length, geocoded().length];
    // How late the instances sent and the sandbox stamped, measured over the run, widens each bound.
    const {
      result: [publishStatuses, geocodeResponses],
      lateness,
    } = await cluster.measureLateness(() =>
      Promise.all([
        Promise.all(instances.flatMap((instance, i) => Array.from({ length: PUBLISHES }, (_v, n) => publishThrough(instance, { instance: i, n })))),
        Promise.all(instances.flatMap((instance, i) => Array.from({ length: GEOCODES }, (_v, n) => geocodeThrough(instance, `${n} Family ${i} Road`)))),
      ]),
    );
    should(publishStatuses.filter((status) => status !== 200)).eql([]);
    should(geocodeResponses.filter((response) => response.status !== 200)).eql([]);

    const measure = (times: number[], ratePerMinute: number) => {
      const spanMs = Math.max(...times) - Math.min(...times);
      return {
        spanMs,
        perMinute: (60_000 * (times.length - 1)) / spanMs,
        allowedPerMinute: promisedRate(ratePerMinute, times.length, lateness.totalMs),
        busiest2s: busiestWindow(times, 2000),
        allowed2s: promisedBusiest(ratePerMinute, 2000, lateness.totalMs),
      };
    };
    const publishes = published().slice(publishesBefore);
    const geocodes = geocoded().slice(geocodesBefore);
    should(publishes).have.length(2 * PUBLISHES);
    should(geocodes).have.length(2 * GEOCODES);
    const topics = measure(publishes, TOPICS_RATE);
    const geocode = measure(geocodes, GEOCODE_RATE);
    // At the topics rate alone the publishes span (n - 1) intervals; waiting on the geocode schedule
    // too (one schedule for both families) they would take at least one geocode interval per geocode more.
    const topicsIntervalMs = 60_000 / TOPICS_RATE;
    const ownScheduleMs = (publishes.length - 1) * topicsIntervalMs;
    const sharedScheduleMs = ownScheduleMs + geocodes.length * (60_000 / GEOCODE_RATE);
    console.log(
      `      topics: ${publishes.length} publishes at ${topics.perMinute.toFixed(1)}/min (allowed ${topics.allowedPerMinute.toFixed(1)}) over ${(topics.spanMs / 1000).toFixed(1)} s (own schedule ${(ownScheduleMs / 1000).toFixed(1)} s, with the geocodes' ${(sharedScheduleMs / 1000).toFixed(1)} s), busiest 2 s ${topics.busiest2s} (allowed ${topics.allowed2s}); geocode: ${geocodes.length} at ${geocode.perMinute.toFixed(1)}/min (allowed ${geocode.allowedPerMinute.toFixed(1)}), busiest 2 s ${geocode.busiest2s} (allowed ${geocode.allowed2s}); sends up to ${lateness.sendMs.toFixed(0)} ms late, arrival stamps up to ${lateness.stampMs.toFixed(0)} ms`,
    );
    // A bound that each instance keeping its own topics schedule (twice the promise) would meet proves nothing.
    should(topics.allowed2s).be.below(2 * promisedBusiest(TOPICS_RATE, 2000) - 2, 'sends and stamps precise enough to tell a shared limit from two');
    should(topics.busiest2s).be.belowOrEqual(topics.allowed2s);
    should(topics.perMinute).be.belowOrEqual(topics.allowedPerMinute);
    should(geocode.busiest2s).be.belowOrEqual(geocode.allowed2s);
    should(geocode.perMinute).be.belowOrEqual(geocode.allowedPerMinute);
    // Never waiting on the geocodes: closer to the topics' own schedule than to one shared with the geocodes.
    should(topics.spanMs).be.below((ownScheduleMs + sharedScheduleMs) / 2, 'publishes paced by the topics schedule alone');
  });
});
