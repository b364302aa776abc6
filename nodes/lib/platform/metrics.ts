import type { PlatformRequest, RateFamily } from './types';
import { SvcError } from '../util/errors';

/**
 * What a config node's client counts, and the Prometheus text format (0.0.4) it is read in. Plain
 * counters, incremented where the client already is: no label set is made and no text written per
 * message; `MetricsRegistry.render` writes everything when a scraper asks.
 */

/** The endpoint families metrics are counted by: the spec's endpoints, and the token endpoint. */
type EndpointFamily = 'geocode' | 'bulk' | 'isoline' | 'sequence' | 'routing' | 'pubsub' | 'words' | 'token';

export const ENDPOINT_FAMILIES: readonly EndpointFamily[] = ['geocode', 'bulk', 'isoline', 'sequence', 'routing', 'pubsub', 'words', 'token'];

/** The endpoint family of a request: its rate family, and for routing its path (isoline and sequence share the routing rate). */
export function endpointFamily(req: Pick<PlatformRequest, 'rate' | 'path'>): EndpointFamily {
  switch (req.rate) {
    case 'topics':
      return 'pubsub';
    case 'routing':
      if (req.path?.startsWith('/v1/routing/isoline')) return 'isoline';
      return req.path?.startsWith('/v1/routing/sequence') ? 'sequence' : 'routing';
    default:
      return req.rate;
  }
}

/** The outcome label of a request: the status class of the platform's response, else the error code (TIMEOUT, NETWORK, QUOTA_EXCEEDED …). */
export function outcomeOf(statusCode: number | undefined, code: string): string {
  if (statusCode !== undefined && statusCode >= 100 && statusCode < 600) return STATUS_CLASSES[Math.floor(statusCode / 100)];
  return code;
}

/** The outcome label of a request that failed: its status class when the platform responded, else its error code. */
export function endedWith(err: unknown): string {
  return err instanceof SvcError ? outcomeOf(err.statusCode, err.code) : 'INTERNAL';
}

/** Written once: no text is made per request. */
const STATUS_CLASSES = ['', '1xx', '2xx', '3xx', '4xx', '5xx'];

/** Upper bounds of the queue wait histogram, in seconds. */
const QUEUE_WAIT_BUCKETS: readonly number[] = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A histogram with fixed buckets; counts per bucket, made cumulative when written. */
export class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

interface FamilyCounts {
  /** Requests ended, by outcome (see `outcomeOf`). */
  outcomes: Map<string, number>;
  retries: number;
  /** Attempts the platform responded to with 429. */
  rateLimited: number;
}

/** The counts of one platform client (one config node). */
export class ClientMetrics {
  readonly families = new Map<EndpointFamily, FamilyCounts>(
    ENDPOINT_FAMILIES.map((family) => [family, { outcomes: new Map<string, number>(), retries: 0, rateLimited: 0 }]),
  );
  /** Time requests waited for their queue (rate limit, concurrency cap), by queue: its rate family, or 'all' for one queue of every family. */
  readonly queueWait = new Map<RateFamily | 'all', Histogram>();
  /** Accepted jobs this instance is polling, by kind. */
  readonly jobsInFlight = new Map<string, number>();

  ended(family: EndpointFamily, outcome: string): void {
    const outcomes = this.counts(family).outcomes;
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }

  retried(family: EndpointFamily): void {
    this.counts(family).retries++;
  }

  rateLimited(family: EndpointFamily): void {
    this.counts(family).rateLimited++;
  }

  waited(queue: RateFamily | 'all', seconds: number): void {
    let histogram = this.queueWait.get(queue);
    if (!histogram) {
      histogram = new Histogram(QUEUE_WAIT_BUCKETS);
      this.queueWait.set(queue, histogram);
    }
    histogram.observe(seconds);
  }

  /** Counts a job in flight; the function returned ends it. */
  jobStarted(kind: string): () => void {
    this.jobsInFlight.set(kind, (this.jobsInFlight.get(kind) ?? 0) + 1);
    return () => this.jobsInFlight.set(kind, (this.jobsInFlight.get(kind) ?? 1) - 1);
  }

  private counts(family: EndpointFamily): FamilyCounts {
    return this.families.get(family) as FamilyCounts;
  }
}

type MetricType = 'counter' | 'gauge' | 'histogram';

/** Labels of one sample: names as Prometheus allows them, values escaped when written. */
export type Labels = Readonly<Record<string, string>>;

/** Writes a sample of a metric named in `METRICS` (a histogram's `_bucket`, `_sum` and `_count` under its own name). */
export type Emit = (metric: string, labels: Labels, value: number, suffix?: '_bucket' | '_sum' | '_count') => void;

/** What the registry asks at each scrape: a config node, a webhook node. */
interface MetricSource {
  collect(emit: Emit): void;
}

/** Every metric the pack exposes, in the order written, with its type and help text. */
export const METRICS: Readonly<Record<string, { type: MetricType; help: string }>> = {
  svc_location_requests_total: { type: 'counter', help: 'Platform requests ended, by endpoint family and outcome (status class or error code).' },
  svc_location_retries_total: { type: 'counter', help: 'Attempts made again after a failure, by endpoint family.' },
  svc_location_rate_limited_total: { type: 'counter', help: 'Attempts the platform responded to with 429, by endpoint family.' },
  svc_location_cache_hits_total: { type: 'counter', help: 'Single geocodes served from the response cache.' },
  svc_location_queue_depth: { type: 'gauge', help: 'Requests waiting for their queue (rate limit, concurrency cap).' },
  svc_location_queue_active: { type: 'gauge', help: 'Requests in flight through their queue.' },
  svc_location_queue_wait_seconds: { type: 'histogram', help: 'Time requests waited for their queue.' },
  svc_location_daily_requests: { type: 'gauge', help: 'Single geocode requests counted today (UTC) against the daily limit.' },
  svc_location_daily_limit: { type: 'gauge', help: 'The daily limit of single geocode requests (0: off).' },
  svc_location_token_age_seconds: { type: 'gauge', help: 'Age of the current access token (absent without one).' },
  svc_location_token_refreshes_total: { type: 'counter', help: 'Access tokens fetched.' },
  svc_location_token_failing: { type: 'gauge', help: '1 while the last token request failed.' },
  svc_location_redis_state: { type: 'gauge', help: 'State of the Redis connection: 1 for the current state (off, connecting, up, slow, bypassed).' },
  svc_location_redis_breaker_open: { type: 'gauge', help: '1 while the Redis circuit breaker is open.' },
  svc_location_redis_roundtrip_seconds: { type: 'gauge', help: 'Round-trip time of the last Redis operation that replied.' },
  svc_location_jobs_in_flight: { type: 'gauge', help: 'Accepted platform jobs this instance is waiting for, by kind.' },
  svc_location_webhook_deliveries_total: { type: 'counter', help: 'Webhook requests, by result (accepted, refused, duplicate).' },
  svc_location_webhook_journal_ok: { type: 'gauge', help: '1 while the webhook replay journal can be written (signed webhooks).' },
};

/**
 * The sources of one process and the text a scrape reads: each metric's HELP and TYPE once, then its
 * samples from every source (Prometheus wants a metric's samples together).
 */
export class MetricsRegistry {
  private readonly sources = new Map<string, MetricSource>();

  /** Adds a source under `key`, replacing any under it; the function returned removes it (unless replaced since). */
  add(key: string, source: MetricSource): () => void {
    this.sources.set(key, source);
    return () => {
      if (this.sources.get(key) === source) this.sources.delete(key);
    };
  }

  render(): string {
    const lines = new Map<string, string[]>(Object.keys(METRICS).map((name) => [name, []]));
    const emit: Emit = (metric, labels, value, suffix) => {
      lines.get(metric)?.push(`${metric}${suffix ?? ''}${labelText(labels)} ${numberText(value)}`);
    };
    for (const source of this.sources.values()) source.collect(emit);
    let text = '';
    for (const [name, samples] of lines) {
      const { type, help } = METRICS[name];
      text += `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`;
      for (const sample of samples) text += `${sample}\n`;
    }
    return text;
  }
}

/** Writes a histogram's buckets (cumulative, `le` last), sum and count. */
export function emitHistogram(emit: Emit, metric: string, labels: Labels, histogram: Histogram): void {
  let cumulative = 0;
  histogram.bounds.forEach((bound, i) => {
    cumulative += histogram.counts[i];
    emit(metric, { ...labels, le: numberText(bound) }, cumulative, '_bucket');
  });
  emit(metric, { ...labels, le: '+Inf' }, histogram.count, '_bucket');
  emit(metric, labels, histogram.sum, '_sum');
  emit(metric, labels, histogram.count, '_count');
}

function labelText(labels: Labels): string {
  const names = Object.keys(labels);
  if (names.length === 0) return '';
  return `{${names.map((name) => `${name}="${escapeLabelValue(labels[name])}"`).join(',')}}`;
}

/** A label value as the text format writes it: backslash, double quote and line feed escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

function numberText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
