import should from 'should';
import { expectOutput, helper, loadWithSandbox, useSandbox, Fields } from '../support/harness';
import { resetBulk } from '../../sandbox/endpoints/bulk';
import { addTopic, resetPubsub } from '../../sandbox/pubsub-state';
import {
  ConsoleCapture,
  NamedFault,
  OutcomeLedger,
  ProcessFailures,
  Random,
  integer,
  leaks,
  pick,
  platformFaults,
  sandboxSecrets,
  seededRandom,
  settle,
  stormFaults,
  suiteSeed,
  tokenEndpointFaults,
  userVisibleTexts,
} from '../support/faults';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Fault storms: every node of the pack gets a stream of messages while the sandbox responds to a random
 * share (25–75 %) of its requests with a random fault (connection resets, hangs and slow responses past the
 * timeout, 5xx, 429 with and without Retry-After, malformed and truncated JSON, slow bodies, the token
 * endpoint down). For every message: exactly one output or one error, never both, never neither.
 * Meanwhile: no unhandled rejection or uncaught exception, no secret in any log line, status text,
 * error or output. Afterwards, with the faults off, the node works normally again.
 */

/** The config node's request timeout: short, so that hangs cost little; retries as in the harness. */
const TIMEOUT_MS = 500;
/** Messages go in in waves, so that faults meet requests at every stage (queued, retrying, polling). */
const WAVE_SIZE = 8;
const WAVE_GAP_MS = 15;
/** Enough for the slowest message: three attempts, each up to the timeout or a Retry-After, several requests per job. */
const OUTCOME_DEADLINE_MS = 90_000;
/** After the last outcome, how long a second outcome for the same message is waited for. */
const DUPLICATE_GRACE_MS = 1500;
/** The isolines' range: one minute by car keeps the sandbox's street search (which runs in this process) short beside the 500 ms timeout. */
const STORM_RANGE_S = 60;

const from = { lat: 52.52, lon: 13.405 };
const to = { lat: 52.5, lon: 13.38 };
const ADDRESSES = ['12 Main Street, Sandbox City', 'near the old mill', 'Hight Street', '10115 Sandbox City', 'nowhere at all', '7 Elm Road'];
const WORDS = ['index.home.raft', '///filled.count.soap', 'дом.слово.река', 'daring.lion.race'];

interface Scenario {
  type: string;
  /** Node properties besides id, type, server and wires. */
  node?: Fields;
  /** The sandbox endpoints the node calls; every one gets faults. */
  endpoints: string[];
  /** Extra faults (the token endpoint) on other endpoints. */
  tokenEndpoint?: boolean;
  messages: number;
  /** A message of the storm; about one in twenty is invalid on purpose (an input error is an outcome too). */
  message(random: Random, topicId: number): Fields;
  /** A message that must give an output once the faults are off. */
  normal(topicId: number): Fields;
}

const SCENARIOS: Scenario[] = [
  {
    type: 'svc-geocode',
    endpoints: ['geocode'],
    messages: 240,
    message: (random) => ({ payload: random() < 0.05 ? pick(random, ['', 42, { street: 'x' }]) : pick(random, ADDRESSES) }),
    normal: () => ({ payload: ADDRESSES[0] }),
  },
  {
    type: 'svc-words',
    endpoints: ['words'],
    tokenEndpoint: true,
    messages: 240,
    message: (random) => ({ payload: random() < 0.05 ? 'two.words' : pick(random, WORDS) }),
    normal: () => ({ payload: WORDS[0] }),
  },
  {
    type: 'svc-bulk-geocode',
    node: { batchSize: 3, parallel: 2, pollInterval: 20, maxWait: 30 },
    endpoints: ['bulk-upload', 'bulk-status', 'bulk-download'],
    messages: 60,
    message: (random) => ({
      payload: random() < 0.05 ? [] : Array.from({ length: integer(random, 1, 7) }, () => pick(random, ADDRESSES)),
    }),
    normal: () => ({ payload: ADDRESSES.slice(0, 4) }),
  },
  {
    type: 'svc-isoline',
    node: { pollInterval: 0.02, maxWait: 30 },
    endpoints: ['isoline', 'isoline-job'],
    messages: 120,
    message: (random) => ({
      payload: { origins: [from], range: { type: 'time', value: random() < 0.05 ? -1 : STORM_RANGE_S }, async: random() < 0.5 },
    }),
    normal: () => ({ payload: { origins: [from], range: { type: 'time', value: STORM_RANGE_S }, async: true } }),
  },
  {
    type: 'svc-sequence',
    node: { pollInterval: 0.02, maxWait: 30 },
    endpoints: ['sequence', 'sequence-job'],
    messages: 120,
    message: (random) => ({ payload: { waypoints: random() < 0.05 ? [] : [from, to, { lat: 52.51, lon: 13.39 }], async: random() < 0.5 } }),
    normal: () => ({ payload: { waypoints: [from, to, { lat: 52.51, lon: 13.39 }], async: true } }),
  },
  {
    type: 'svc-route',
    endpoints: ['route'],
    messages: 160,
    message: (random) => ({ payload: { waypoints: random() < 0.05 ? [from] : [from, to] } }),
    normal: () => ({ payload: { waypoints: [from, to] } }),
  },
  {
    type: 'svc-topic-publish',
    endpoints: ['topic-publish'],
    messages: 160,
    message: (random, topicId) => ({ topicId, locationId: 'cell-1', payload: random() < 0.05 ? 'not an object' : { reading: random() } }),
    normal: (topicId) => ({ topicId, locationId: 'cell-1', payload: { reading: 1 } }),
  },
  {
    type: 'svc-topic',
    endpoints: ['topic-create', 'topic-list', 'topic-get', 'topic-delete', 'subscription-create'],
    messages: 160,
    message: (random, topicId) =>
      pick(random, [
        { operation: 'create-topic', payload: { Name: `storm ${integer(random, 1, 1e6)}`, Description: 'fault storm' } },
        { operation: 'list-topics' },
        { operation: 'get-topic', topicId },
        { operation: 'create-subscription', topicId, payload: { WebhookAddress: 'http://127.0.0.1:9/hook', LocationIds: ['cell-1'] } },
        { operation: 'get-topic', topicId: 'not a number' },
      ]),
    normal: (topicId) => ({ operation: 'get-topic', topicId }),
  },
];

describe('fault storm: one outcome per message whatever the platform does', function () {
  this.timeout(150_000);
  // Tokens live one second, so that svc-words renews its token several times during its storm.
  const ctx = useSandbox({ tokenLifetimeSec: 1, jobPolls: 2 });
  const seed = suiteSeed('fault storm');
  const failures = new ProcessFailures();
  let topicId = 0;

  before(() => failures.start());
  after(() => failures.stop());
  beforeEach(function () {
    resetBulk(ctx.sandbox);
    resetPubsub(ctx.sandbox);
    topicId = addTopic(ctx.sandbox, 'storm').id;
  });

  const load = (scenario: Scenario) =>
    loadWithSandbox(ctx.sandbox, {
      types: [scenario.type],
      nodes: [{ id: 'n1', type: scenario.type, ...scenario.node }],
      config: { timeout: TIMEOUT_MS, maxRetries: 2, maxConcurrency: 16, maxQueue: 1000 },
    });

  /** Sends the scenario's messages in waves; returns their ids. */
  async function sendStorm(scenario: Scenario, random: Random): Promise<number[]> {
    const node = helper.getNode('n1');
    const ids: number[] = [];
    for (let id = 0; id < scenario.messages; id++) {
      node.receive({ ...scenario.message(random, topicId), faultId: id });
      ids.push(id);
      if (id % WAVE_SIZE === WAVE_SIZE - 1) await sleep(WAVE_GAP_MS);
    }
    return ids;
  }

  interface StormOptions {
    /** Faults on the endpoints the node calls, and on the token endpoint for svc-words. */
    faults: Array<{ endpoints: string[]; menu: NamedFault[] }>;
    rate: number;
    /** Close the node (as a redeploy does) this long after the last message went in. */
    closeAfterMs?: number;
  }

  /**
   * Loads the scenario's node, storms it and checks the invariants: exactly one outcome per message,
   * no unhandled rejection or uncaught exception, no secret where a user can see it.
   */
  async function storm(scenario: Scenario, random: Random, options: StormOptions): Promise<OutcomeLedger> {
    await load(scenario);
    const ledger = new OutcomeLedger('n1');
    const captured = new ConsoleCapture();
    const chosen = new Map<string, number>();
    for (const { endpoints, menu } of options.faults) stormFaults(ctx.sandbox, endpoints, menu, random, options.rate, chosen);
    captured.start();
    try {
      const ids = await sendStorm(scenario, random);
      if (options.closeAfterMs !== undefined) {
        await sleep(options.closeAfterMs);
        // What a redeploy does to the node: close while messages are queued, in flight, retrying and polling.
        await (helper.getNode('n1') as unknown as { close(removed: boolean): Promise<void> }).close(true);
      }
      const everyOutcomeIn = await settle(() => ledger.waiting(ids).length === 0, OUTCOME_DEADLINE_MS);
      await sleep(DUPLICATE_GRACE_MS);
      const problems = ledger.violations(ids);
      if (!everyOutcomeIn || problems.length > 0) {
        const faults = [...chosen.entries()].map(([name, n]) => `${name} ×${n}`).join(', ');
        throw new Error(
          `seed ${seed}: ${problems.length} message(s) broke the one-outcome rule:\n  ${problems.slice(0, 20).join('\n  ')}\n` +
            `fault rate ${options.rate.toFixed(2)}; faults injected: ${faults}`,
        );
      }
    } finally {
      captured.stop();
    }
    should(failures.seen).be.empty();
    should(leaks(userVisibleTexts(captured, ledger.visible()), sandboxSecrets(ctx.sandbox))).be.empty();
    should([...chosen.values()].reduce((a, b) => a + b, 0)).be.above(0, 'no fault was injected');
    return ledger;
  }

  const faultsOf = (scenario: Scenario) => [
    { endpoints: scenario.endpoints, menu: platformFaults(TIMEOUT_MS) },
    ...(scenario.tokenEndpoint ? [{ endpoints: ['token'], menu: tokenEndpointFaults(TIMEOUT_MS) }] : []),
  ];

  /** With the faults off, the same node, unchanged, works normally again. */
  async function expectRecovery(scenario: Scenario): Promise<void> {
    ctx.sandbox.clearFaults();
    for (let i = 0; i < 3; i++) await expectOutput('n1', { ...scenario.normal(topicId), faultId: -1 - i }, 10_000);
    should(failures.seen).be.empty();
  }

  for (const [index, scenario] of SCENARIOS.entries()) {
    it(`${scenario.type}: ${scenario.messages} messages under random faults, then back to normal`, async function () {
      const random = seededRandom(seed + index);
      const ledger = await storm(scenario, random, { faults: faultsOf(scenario), rate: 0.25 + random() * 0.5 });
      await expectRecovery(scenario);
      ledger.detach();
    });
  }

  for (const [index, scenario] of SCENARIOS.filter((s) => ['svc-geocode', 'svc-bulk-geocode', 'svc-isoline', 'svc-words'].includes(s.type)).entries()) {
    it(`${scenario.type}: closed (redeployed) mid-storm, every message still gets exactly one outcome`, async function () {
      const random = seededRandom(seed + 100 + index);
      const ledger = await storm(scenario, random, { faults: faultsOf(scenario), rate: 0.4, closeAfterMs: integer(random, 50, 400) });
      ledger.detach();
    });
  }

  const words = SCENARIOS.find((s) => s.type === 'svc-words') as Scenario;
  it('svc-words: token endpoint down for the whole storm, every message an error, then back to normal', async function () {
    const random = seededRandom(seed + 200);
    const ledger = await storm({ ...words, messages: 60 }, random, { faults: [{ endpoints: ['token'], menu: tokenEndpointFaults(TIMEOUT_MS) }], rate: 1 });
    should(ledger.outputs.size).equal(0);
    await expectRecovery(words);
    ledger.detach();
  });
});
