import type { Sandbox } from './server';

/**
 * The state of the sandbox's data topics (`endpoints/pubsub.ts`): topics, subscriptions and the webhook
 * deliveries of publishes, with the switches tests set, and the calls that change it as the endpoints do.
 */

const SANDBOX_USER_ID = 'sandbox-user';
export const PUBSUB_LIMITS = { topics: 1000, subscriptions: 1000, locationIds: 100, dataBytes: 64 * 1024, deliveries: 1000 } as const;
/** The headers every webhook attempt carries: one id per delivery, and the attempt's number from 1. */
export const DELIVERY_ID_HEADER = 'svc-delivery-id';
export const DELIVERY_ATTEMPT_HEADER = 'svc-delivery-attempt';

export interface SandboxTopic {
  id: number;
  name: string;
  description: string;
  createdAt: string;
  userId: string;
}

export interface SandboxSubscription {
  id: number;
  topicId: number;
  webhookAddress: string;
  webhookHeader?: string;
  secretToken?: string;
  locationIds: string[];
  active: boolean;
  /** Set when a delivery to it failed after all its attempts; cleared by a successful one. */
  failing?: boolean;
}

export interface Delivery {
  /** The same in every attempt (header `svc-delivery-id`). */
  id: string;
  subscriptionId: number;
  topicId: number;
  locationId: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The receiver's response to the last attempt, once there is one. */
  status?: number;
  error?: string;
  /** Attempts made so far. */
  attempts: number;
  /** True once delivered (2xx), refused for good, out of attempts, or stopped by close(). */
  finished: boolean;
}

interface PubsubState {
  topics: Map<number, SandboxTopic>;
  subscriptions: SandboxSubscription[];
  deliveries: Delivery[];
  nextTopicId: number;
  nextSubscriptionId: number;
  failureStatus: number;
  maxPageSize: number;
  publishResponse: 'envelope' | 'empty';
  timestampUnit: 's' | 'ms';
  /** The waits before the second, third, … attempt of a delivery (so attempts are at most one more). */
  retryDelaysMs: number[];
  /** How long an attempt waits for the receiver's response. */
  attemptTimeoutMs: number;
}

function initialState(): PubsubState {
  return {
    topics: new Map(),
    subscriptions: [],
    deliveries: [],
    nextTopicId: 1,
    nextSubscriptionId: 1,
    failureStatus: 404,
    maxPageSize: 100,
    publishResponse: 'envelope',
    timestampUnit: 's',
    retryDelaysMs: [1000, 4000, 16_000, 64_000],
    attemptTimeoutMs: 5000,
  };
}

export function pubsubState(sandbox: Sandbox): PubsubState {
  return sandbox.stateOf('pubsub', initialState);
}

/** Forgets every topic, subscription and delivery and restores the default switches. */
export function resetPubsub(sandbox: Sandbox): void {
  Object.assign(pubsubState(sandbox), initialState());
}

/** Creates a topic as `POST /topics` does (tests may also call it to set the stage). */
export function addTopic(sandbox: Sandbox, name: string, description = ''): SandboxTopic {
  const state = pubsubState(sandbox);
  const topic: SandboxTopic = {
    id: state.nextTopicId++,
    name,
    description,
    createdAt: timestampWithoutZone(new Date()),
    userId: SANDBOX_USER_ID,
  };
  state.topics.set(topic.id, topic);
  return topic;
}

/** Creates an active subscription as `POST /subscriptions` does. */
export function addSubscription(sandbox: Sandbox, fields: Omit<SandboxSubscription, 'id' | 'active'>): SandboxSubscription {
  const state = pubsubState(sandbox);
  const subscription: SandboxSubscription = { id: state.nextSubscriptionId++, active: true, ...fields };
  state.subscriptions.push(subscription);
  return subscription;
}

/** The switch that makes a subscription inactive (or active again). */
export function setSubscriptionActive(sandbox: Sandbox, subscriptionId: number, active: boolean): void {
  const subscription = pubsubState(sandbox).subscriptions.find((s) => s.id === subscriptionId);
  if (!subscription) throw new Error(`no subscription ${subscriptionId}`);
  subscription.active = active;
}

/** Resolves once `count` deliveries have had a response (or failed); rejects after `timeoutMs`. */
export function waitForDeliveries(sandbox: Sandbox, count: number, timeoutMs = 4000): Promise<Delivery[]> {
  const state = pubsubState(sandbox);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const check = () => {
      const finished = state.deliveries.filter((d) => d.finished);
      if (finished.length >= count) return resolve(finished);
      if (Date.now() - started > timeoutMs) {
        return reject(new Error(`${finished.length} of ${count} webhook deliveries finished within ${timeoutMs} ms`));
      }
      setTimeout(check, 20);
    };
    check();
  });
}

/** Logs a delivery, forgetting the oldest finished ones beyond `PUBSUB_LIMITS.deliveries`. */
export function keepDelivery(state: PubsubState, delivery: Delivery): void {
  state.deliveries.push(delivery);
  let excess = state.deliveries.length - PUBSUB_LIMITS.deliveries;
  if (excess > 0) state.deliveries = state.deliveries.filter((kept) => !(kept.finished && excess-- > 0));
}

/** ISO 8601 with fractional seconds (seven digits, as .NET writes them) and no zone designator. */
function timestampWithoutZone(date: Date): string {
  return `${date.toISOString().slice(0, 23)}0000`;
}
