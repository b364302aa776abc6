import { createHash, randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { DELIVERY_ATTEMPT_HEADER, DELIVERY_ID_HEADER, pubsubState, type Delivery, type SandboxSubscription } from './pubsub-state';
import type { Sandbox } from './server';

/** The webhooks a publish sends (`endpoints/pubsub.ts` states their contract): signed, sent and tried again. */

/** A new delivery of `body` to a subscription: signed when it has a SecretToken, with its WebhookHeader. */
export function signedDelivery(subscription: SandboxSubscription, locationId: string, body: string, unit: 's' | 'ms'): Delivery {
  const id = randomUUID();
  const headers: Record<string, string> = { 'content-type': 'application/json', [DELIVERY_ID_HEADER]: id };
  if (subscription.secretToken) {
    const t = String(unit === 'ms' ? Date.now() : Math.floor(Date.now() / 1000));
    const digest = createHash('sha256').update(`${t}.${subscription.secretToken}.${body}`).digest('hex');
    headers['svc-signature'] = `t=${t},digestV1=${digest}`;
  }
  if (subscription.webhookHeader) {
    const separator = subscription.webhookHeader.indexOf(':');
    headers[subscription.webhookHeader.slice(0, separator).trim().toLowerCase()] = subscription.webhookHeader.slice(separator + 1).trim();
  }
  return {
    id,
    subscriptionId: subscription.id,
    topicId: subscription.topicId,
    locationId,
    url: subscription.webhookAddress,
    headers,
    body,
    attempts: 0,
    finished: false,
  };
}

/** Whether a response status asks for another attempt: 5xx, 408 (timeout) and 429 (too many requests). */
function retryable(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/**
 * Sends webhook POSTs with its own connection pool, and again after the state's `retryDelaysMs` (on the
 * sandbox's timers, which close() clears); close() aborts what is in flight and waits for it.
 */
export class Deliverer {
  private readonly agent = new Agent({ keepAliveTimeout: 1000 });
  private readonly stop = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly sandbox: Sandbox) {}

  send(delivery: Delivery, subscription: SandboxSubscription): void {
    const attempt = this.attempt(delivery, subscription).finally(() => this.inFlight.delete(attempt));
    this.inFlight.add(attempt);
  }

  async close(): Promise<void> {
    this.stop.abort();
    await Promise.allSettled([...this.inFlight]);
    await this.agent.destroy();
  }

  private async attempt(delivery: Delivery, subscription: SandboxSubscription): Promise<void> {
    const { retryDelaysMs, attemptTimeoutMs } = pubsubState(this.sandbox);
    delivery.attempts++;
    let failure: string;
    let again: boolean;
    try {
      const response = await request(delivery.url, {
        method: 'POST',
        headers: { ...delivery.headers, [DELIVERY_ATTEMPT_HEADER]: String(delivery.attempts) },
        body: delivery.body,
        dispatcher: this.agent,
        signal: AbortSignal.any([this.stop.signal, AbortSignal.timeout(attemptTimeoutMs)]),
      });
      await response.body.text();
      delivery.status = response.statusCode;
      delivery.error = undefined;
      if (response.statusCode >= 200 && response.statusCode < 300) {
        delivery.finished = true;
        subscription.failing = undefined;
        this.sandbox.info(`${this.describe(delivery)} delivered: responded ${response.statusCode}`);
        return;
      }
      failure = `responded ${response.statusCode}`;
      again = retryable(response.statusCode);
    } catch (err) {
      delivery.status = undefined;
      delivery.error = err instanceof Error ? err.message : String(err);
      failure = this.stop.signal.aborted ? 'stopped: the sandbox closed' : `no response (${delivery.error})`;
      again = !this.stop.signal.aborted;
    }
    const wait = again ? retryDelaysMs[delivery.attempts - 1] : undefined;
    const of = this.describe(delivery);
    if (wait !== undefined) {
      this.sandbox.warn(`${of} failed: ${failure}; trying again in ${wait / 1000} s`);
      this.sandbox.later(wait, () => this.send(delivery, subscription));
      return;
    }
    delivery.finished = true;
    if (this.stop.signal.aborted) return void this.sandbox.warn(`${of} failed: ${failure}`);
    subscription.failing = true;
    this.sandbox.warn(`${of} failed: ${failure}; not tried again, subscription ${delivery.subscriptionId} marked failing`);
  }

  /** A delivery's current attempt, as its log lines name it. */
  private describe(delivery: Delivery): string {
    const { retryDelaysMs } = pubsubState(this.sandbox);
    return `webhook delivery ${delivery.id} to ${webhookOrigin(delivery.url)} (subscription ${delivery.subscriptionId}), attempt ${delivery.attempts} of ${retryDelaysMs.length + 1}`;
  }
}

/** The address of a webhook without its query or credentials, for the log. */
function webhookOrigin(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return 'an unreadable address';
  }
}
