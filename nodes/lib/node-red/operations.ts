import type { Request, Response } from 'express';
import type { Node, NodeAPI } from './types';
import type { SvcConfigNode } from './config';
import { ENDPOINT_FAMILIES, Emit, Labels, MetricsRegistry, emitHistogram } from '../platform/metrics';
import type { SharedState } from '../state/shared-state';

/**
 * What an operator's monitoring reads (docs/operations.md): the metrics of every deployed config node
 * and webhook node in the Prometheus text format, and a health summary that says which cannot work.
 * One registry per process: each node adds itself when it starts and leaves when it closes.
 */

const registry = new MetricsRegistry();

/** What a webhook node adds: its counts, and whether its replay journal can be written. */
export interface WebhookCounts {
  accepted: number;
  refused: number;
  duplicate: number;
  /** 'none' for an unsigned webhook (no journal); 'failing' while deliveries cannot be recorded. */
  journal(): 'ok' | 'failing' | 'none';
}

/** Why a deployed node cannot work, as the health summary names it. */
type HealthProblem = 'token' | 'redis' | 'quota' | 'journal';

interface Checked {
  id: string;
  name: string;
  type: 'svc-config' | 'svc-webhook-in';
  problems: HealthProblem[];
}

const checks = new Map<string, () => Checked>();

/** Adds a config node's metrics and health until it closes (call once it has its client and shared services). */
export function watchConfig(node: SvcConfigNode): void {
  const labels = { config_id: node.id, config_name: node.name ?? '' };
  const { client, shared } = node;
  const collect = (emit: Emit) => {
    for (const family of ENDPOINT_FAMILIES) {
      const counts = client.metrics.families.get(family);
      if (!counts) continue;
      const own = { ...labels, family };
      for (const [outcome, value] of counts.outcomes) emit('svc_location_requests_total', { ...own, outcome }, value);
      emit('svc_location_retries_total', own, counts.retries);
      emit('svc_location_rate_limited_total', own, counts.rateLimited);
    }
    if (shared.cache) emit('svc_location_cache_hits_total', { ...labels, family: 'geocode' }, shared.cache.hits);
    for (const [queue, gate] of client.queues()) {
      emit('svc_location_queue_depth', { ...labels, queue }, gate.waiting);
      emit('svc_location_queue_active', { ...labels, queue }, gate.active);
    }
    for (const [queue, histogram] of client.metrics.queueWait) emitHistogram(emit, 'svc_location_queue_wait_seconds', { ...labels, queue }, histogram);
    emit('svc_location_daily_requests', labels, shared.quota?.usedToday() ?? 0);
    emit('svc_location_daily_limit', labels, shared.quota?.limit ?? 0);
    const { tokens } = client;
    if (tokens.issuedAt > 0) emit('svc_location_token_age_seconds', labels, (Date.now() - tokens.issuedAt) / 1000);
    emit('svc_location_token_refreshes_total', labels, tokens.refreshes);
    emit('svc_location_token_failing', labels, tokens.failing ? 1 : 0);
    const current = redisState(shared.state);
    for (const state of REDIS_STATES) emit('svc_location_redis_state', { ...labels, state }, state === current ? 1 : 0);
    emit('svc_location_redis_breaker_open', labels, shared.state.breakerOpen ? 1 : 0);
    if (shared.state.lastRoundTripMs !== undefined) emit('svc_location_redis_roundtrip_seconds', labels, shared.state.lastRoundTripMs / 1000);
    for (const [kind, value] of client.metrics.jobsInFlight) emit('svc_location_jobs_in_flight', { ...labels, kind }, value);
  };
  const check = (): Checked => {
    const problems: HealthProblem[] = [];
    if (client.tokens.failing) problems.push('token');
    if (shared.state.configured && shared.state.mode === 'unavailable') problems.push('redis');
    if (shared.quota && shared.quota.usedToday() >= shared.quota.limit) problems.push('quota');
    return { id: node.id, name: node.name ?? '', type: 'svc-config', problems };
  };
  watch(node, { collect }, check);
}

/** Adds a webhook node's deliveries and journal state until it closes. */
export function watchWebhook(node: Node, counts: WebhookCounts): void {
  const labels: Labels = { node_id: node.id, node_name: node.name ?? '' };
  const collect = (emit: Emit) => {
    emit('svc_location_webhook_deliveries_total', { ...labels, result: 'accepted' }, counts.accepted);
    emit('svc_location_webhook_deliveries_total', { ...labels, result: 'refused' }, counts.refused);
    emit('svc_location_webhook_deliveries_total', { ...labels, result: 'duplicate' }, counts.duplicate);
    const journal = counts.journal();
    if (journal !== 'none') emit('svc_location_webhook_journal_ok', labels, journal === 'ok' ? 1 : 0);
  };
  const check = (): Checked => ({ id: node.id, name: node.name ?? '', type: 'svc-webhook-in', problems: counts.journal() === 'failing' ? ['journal'] : [] });
  watch(node, { collect }, check);
}

function watch(node: Node, source: { collect(emit: Emit): void }, check: () => Checked): void {
  const removeSource = registry.add(node.id, source);
  checks.set(node.id, check);
  node.on('close', () => {
    removeSource();
    if (checks.get(node.id) === check) checks.delete(node.id);
  });
}

const REDIS_STATES = ['off', 'connecting', 'up', 'slow', 'bypassed'] as const;

/** `bypassed`: configured but away, its work done on this instance's own state. */
function redisState(state: SharedState): (typeof REDIS_STATES)[number] {
  switch (state.mode) {
    case 'local':
      return 'off';
    case 'connecting':
      return 'connecting';
    case 'unavailable':
      return 'bypassed';
    default:
      return state.slow ? 'slow' : 'up';
  }
}

/** The health summary: every deployed node checked; `ok` when none has a problem. */
function health(): { ok: boolean; nodes: Checked[] } {
  const nodes = [...checks.values()].map((check) => check());
  return { ok: nodes.every((node) => node.problems.length === 0), nodes };
}

/** The settings.js option of the pack: `svcLocation: { healthOnHttpNode: true }` serves the health at `{httpNodeRoot}svc-health` too. */
interface PackSettings {
  svcLocation?: { healthOnHttpNode?: unknown };
}

/** Adds the routes, once per runtime: the admin ones behind `svc-config.read`, and the probe's on httpNode when settings.js asks. */
export function addOperationsRoutes(RED: NodeAPI): void {
  const read = RED.auth.needsPermission('svc-config.read');
  RED.httpAdmin.get('/svc-config/metrics', read, (_req: Request, res: Response) => {
    res.set('content-type', 'text/plain; version=0.0.4; charset=utf-8').set('cache-control', 'no-store').send(registry.render());
  });
  RED.httpAdmin.get('/svc-config/health', read, sendHealth);
  const settings = RED.settings as PackSettings & { httpNodeRoot?: string | false };
  if (settings.svcLocation?.healthOnHttpNode === true && settings.httpNodeRoot !== false) RED.httpNode.get('/svc-health', sendHealth);
}

function sendHealth(_req: Request, res: Response): void {
  const summary = health();
  res
    .status(summary.ok ? 200 : 503)
    .set('cache-control', 'no-store')
    .json({ status: summary.ok ? 'ok' : 'failing', nodes: summary.nodes });
}
