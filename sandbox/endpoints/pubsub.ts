import { badRequest, sendJson } from '../http';
import { PUBSUB_LIMITS, addSubscription, addTopic, keepDelivery, pubsubState, type SandboxTopic } from '../pubsub-state';
import { RouteContext, Sandbox } from '../server';
import { Deliverer, signedDelivery } from '../webhooks';

/**
 * Data topics and subscriptions under `/v1/pubsub` (header `apikey`), and the webhooks a publish sends.
 *
 * - Topics: integer ids, `createdAt` in ISO 8601 with fractional seconds and no zone, `userId`, every
 *   response in the `{ isSuccess, data }` envelope; listing pages with `limit`/`offset` query parameters
 *   (default limit 10, capped at `maxPageSize`) and responds with `{ limit, offset, totalCount, items }`.
 * - Unknown topics get `{ isSuccess: false, data: null, message }` with status `failureStatus`
 *   (404 by default; set 200 to behave like services that report failure only in the envelope).
 * - Request fields are capitalised as the spec says; unknown or lower-case fields are a 400.
 * - Delete responds with 204 and no body. Publish responds with 200 and an envelope, or 202 with no body when
 *   `publishResponse` is 'empty' (the spec does not show either body).
 * - A publish POSTs, after responding, to every active subscription of the topic that lists the
 *   location: body `{ topicId, locationId, data, publishedAt }` pretty-printed (so that a receiver that
 *   re-serialises the JSON fails the signature check), `svc-signature` when the subscription has a
 *   SecretToken (`t` in seconds, or milliseconds with `timestampUnit: 'ms'`), and the WebhookHeader.
 *   Every delivery is logged in `deliveries`; `setSubscriptionActive` switches a subscription off.
 * - Retries (the spec shows none; docs/sandbox.md): a delivery is attempted again after
 *   `retryDelaysMs` (1, 4, 16 and 64 s: five attempts at most) when the receiver responds 5xx, 408 or
 *   429, or not at all within `attemptTimeoutMs` (5 s), or cannot be reached. Every attempt is the
 *   same request (body, signature and `svc-delivery-id`) but for `svc-delivery-attempt` (1, 2, …). 2xx
 *   ends a delivery; any other status ends it as failed. A delivery that ends failed marks its
 *   subscription `failing` (it is still sent to; its next successful delivery clears the mark), which
 *   `GET /subscriptions` (a sandbox addition, secrets left out) shows as `status`. Each failed attempt
 *   is one line through `sandbox.warn`, each delivered webhook one line through `sandbox.info`.
 * - Caps (docs/sandbox.md): `PUBSUB_LIMITS` topics and subscriptions kept (409 beyond), location ids
 *   per subscription (400), bytes of a publish's `Data` (413), deliveries kept in `deliveries`.
 */

const DEFAULT_PAGE_SIZE = 10;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export default function pubsubEndpoints(sandbox: Sandbox): void {
  const state = () => pubsubState(sandbox);
  const deliverer = new Deliverer(sandbox);
  sandbox.onClose(() => deliverer.close());
  const spec = (endpoint: string) => ({ endpoint, auth: 'pubsub' as const, permission: 'pubsub' as const });

  sandbox.route('POST', '/v1/pubsub/topics', spec('topic-create'), (ctx) => {
    const body = jsonObject(ctx, ['Name', 'Description']);
    if (!body) return;
    if (typeof body.Name !== 'string' || body.Name.trim() === '') return void badRequest(ctx.res, 'Name is required and must be a non-empty string');
    if (typeof body.Description !== 'string') return void badRequest(ctx.res, 'Description is required and must be a string');
    if (state().topics.size >= PUBSUB_LIMITS.topics) return void overLimit(ctx, 409, `at most ${PUBSUB_LIMITS.topics} topics are kept; delete one first`);
    sendJson(ctx.res, 200, { isSuccess: true, data: addTopic(sandbox, body.Name, body.Description) });
  });

  sandbox.route('GET', '/v1/pubsub/topics', spec('topic-list'), (ctx) => {
    const unknown = [...ctx.url.searchParams.keys()].find((key) => key !== 'limit' && key !== 'offset');
    if (unknown) return void badRequest(ctx.res, `unknown query parameter ${unknown}`);
    const limit = queryInteger(ctx, 'limit', 1);
    const offset = queryInteger(ctx, 'offset', 0);
    if (limit === null || offset === null) return;
    const pageSize = Math.min(limit ?? DEFAULT_PAGE_SIZE, state().maxPageSize);
    const all = [...state().topics.values()].sort((a, b) => a.id - b.id);
    const start = offset ?? 0;
    sendJson(ctx.res, 200, {
      isSuccess: true,
      data: { limit: pageSize, offset: start, totalCount: all.length, items: all.slice(start, start + pageSize) },
    });
  });

  sandbox.route('GET', '/v1/pubsub/topics/:topicId', spec('topic-get'), (ctx) => {
    const topic = topicOf(ctx);
    if (topic) sendJson(ctx.res, 200, { isSuccess: true, data: topic });
  });

  sandbox.route('DELETE', '/v1/pubsub/topics/:topicId', spec('topic-delete'), (ctx) => {
    const topic = topicOf(ctx);
    if (!topic) return;
    state().topics.delete(topic.id);
    state().subscriptions = state().subscriptions.filter((s) => s.topicId !== topic.id);
    ctx.res.writeHead(204).end();
  });

  sandbox.route('POST', '/v1/pubsub/topics/:topicId/publish', spec('topic-publish'), (ctx) => {
    const body = jsonObject(ctx, ['LocationId', 'Data']);
    if (!body) return;
    if (typeof body.LocationId !== 'string' || body.LocationId.trim() === '') {
      return void badRequest(ctx.res, 'LocationId is required and must be a non-empty string');
    }
    if (body.Data === null || typeof body.Data !== 'object' || Array.isArray(body.Data)) {
      return void badRequest(ctx.res, 'Data is required and must be a JSON object');
    }
    const dataBytes = Buffer.byteLength(JSON.stringify(body.Data));
    if (dataBytes > PUBSUB_LIMITS.dataBytes)
      return void overLimit(ctx, 413, `Data is ${dataBytes} bytes of JSON; the sandbox takes at most ${PUBSUB_LIMITS.dataBytes}`);
    const topic = topicOf(ctx);
    if (!topic) return;
    const locationId = body.LocationId;
    const targets = state().subscriptions.filter((s) => s.active && s.topicId === topic.id && s.locationIds.includes(locationId));
    if (state().publishResponse === 'empty') ctx.res.writeHead(202).end();
    else sendJson(ctx.res, 200, { isSuccess: true, data: { topicId: topic.id, locationId, subscriptions: targets.length } });
    const webhookBody = JSON.stringify({ topicId: topic.id, locationId, data: body.Data, publishedAt: new Date().toISOString() }, null, 2);
    for (const subscription of targets) {
      const delivery = signedDelivery(subscription, locationId, webhookBody, state().timestampUnit);
      keepDelivery(state(), delivery);
      deliverer.send(delivery, subscription);
    }
  });

  sandbox.route('POST', '/v1/pubsub/subscriptions', spec('subscription-create'), (ctx) => {
    const body = jsonObject(ctx, ['WebhookAddress', 'WebhookHeader', 'SecretToken', 'LocationIds', 'TopicId']);
    if (!body || !validSubscription(ctx, body)) return;
    const topicId = body.TopicId as number;
    if (!state().topics.has(topicId)) return void fail(ctx, `topic ${topicId} not found`);
    if (state().subscriptions.length >= PUBSUB_LIMITS.subscriptions) {
      return void overLimit(ctx, 409, `at most ${PUBSUB_LIMITS.subscriptions} subscriptions are kept; delete a topic first`);
    }
    const subscription = addSubscription(sandbox, {
      topicId,
      webhookAddress: body.WebhookAddress as string,
      webhookHeader: body.WebhookHeader as string | undefined,
      secretToken: body.SecretToken as string | undefined,
      locationIds: body.LocationIds as string[],
    });
    const { secretToken: _secret, webhookHeader: _header, ...visible } = subscription;
    sendJson(ctx.res, 200, { isSuccess: true, data: visible });
  });

  sandbox.route('GET', '/v1/pubsub/subscriptions', spec('subscription-list'), (ctx) => {
    const items = state().subscriptions.map(({ secretToken: _secret, webhookHeader: _header, failing, ...visible }) => ({
      ...visible,
      status: !visible.active ? 'inactive' : failing ? 'failing' : 'active',
    }));
    sendJson(ctx.res, 200, { isSuccess: true, data: { limit: items.length, offset: 0, totalCount: items.length, items } });
  });

  /** The topic named by `:topicId`; responds with 400 or the failure envelope and returns undefined otherwise. */
  function topicOf(ctx: RouteContext): SandboxTopic | undefined {
    if (!/^\d+$/.test(ctx.params.topicId)) return void badRequest(ctx.res, 'topicId must be an integer');
    const topic = state().topics.get(Number(ctx.params.topicId));
    if (!topic) fail(ctx, `topic ${ctx.params.topicId} not found`);
    return topic;
  }

  function fail(ctx: RouteContext, message: string): void {
    sendJson(ctx.res, state().failureStatus, { isSuccess: false, data: null, message });
  }
}

/** A request beyond one of `PUBSUB_LIMITS`: the failure envelope with the sandbox's error member. */
function overLimit(ctx: RouteContext, status: number, message: string): void {
  sendJson(ctx.res, status, { isSuccess: false, data: null, error: 'limit_exceeded', message });
}

/** The body as a JSON object with only the allowed (capitalised) members, or undefined after a 400. */
function jsonObject(ctx: RouteContext, allowed: string[]): Record<string, unknown> | undefined {
  const body = ctx.json();
  if (body === undefined) return undefined;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return void badRequest(ctx.res, 'body must be a JSON object');
  const unknown = Object.keys(body).find((key) => !allowed.includes(key));
  if (unknown) return void badRequest(ctx.res, `unknown field ${unknown}; the fields are ${allowed.join(', ')}`);
  return body as Record<string, unknown>;
}

function validSubscription(ctx: RouteContext, body: Record<string, unknown>): boolean {
  const address = body.WebhookAddress;
  if (typeof address !== 'string' || !/^https?:\/\/[^\s/]+/i.test(address)) {
    return badRequest(ctx.res, 'WebhookAddress is required and must be an http(s) URL');
  }
  const header = body.WebhookHeader;
  if (header !== undefined) {
    const separator = typeof header === 'string' ? header.indexOf(':') : -1;
    if (typeof header !== 'string' || separator < 0 || !HEADER_NAME.test(header.slice(0, separator).trim())) {
      return badRequest(ctx.res, 'WebhookHeader must have the form <header-name>:<header-value>');
    }
  }
  if (body.SecretToken !== undefined && (typeof body.SecretToken !== 'string' || body.SecretToken === '')) {
    return badRequest(ctx.res, 'SecretToken must be a non-empty string');
  }
  const ids = body.LocationIds;
  if (!Array.isArray(ids) || ids.length === 0 || ids.some((id) => typeof id !== 'string' || id.trim() === '')) {
    return badRequest(ctx.res, 'LocationIds is required and must be a non-empty array of non-empty strings');
  }
  if (ids.length > PUBSUB_LIMITS.locationIds) {
    return badRequest(ctx.res, `LocationIds holds ${ids.length} ids; the sandbox takes at most ${PUBSUB_LIMITS.locationIds} a subscription`);
  }
  if (typeof body.TopicId !== 'number' || !Number.isSafeInteger(body.TopicId)) {
    return badRequest(ctx.res, 'TopicId is required and must be an integer');
  }
  return true;
}

/** A query parameter that must be an integer of at least `min`: undefined when absent, null after a 400. */
function queryInteger(ctx: RouteContext, name: string, min: number): number | undefined | null {
  const text = ctx.url.searchParams.get(name);
  if (text === null) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min) {
    badRequest(ctx.res, `${name} must be an integer of at least ${min}`);
    return null;
  }
  return Number(text);
}
