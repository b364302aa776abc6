import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Node, NodeAPI } from './types';
import { setStatusNote } from './status';
import { nodeLog, translate } from './i18n';
import { catalogText } from '../util/catalog-text';
import { ConfigError, causeOf } from '../util/errors';
import { failure } from './failure';
import { LocalPacer, Pacer } from '../platform/request-gate';
import type { RateFamily } from '../platform/types';
import { ResponseCache } from '../state/response-cache';
import { sharedPacer } from '../state/pacer';
import { CounterFile, DailyQuota } from '../state/quota';
import { SharedState } from '../state/shared-state';
import { warnIfStateIsLost } from './containers';

/** The file in Node-RED's user directory that keeps the daily counts of an instance without Redis. */
export const QUOTA_FILE = 'svc-location-quota.json';
const ENV_REFERENCE = /^\$\{(\w+)\}$/;

interface SharedSettings {
  /** `redisUrl` as Node-RED gives it: already substituted when it was `${VAR}` and VAR is set. */
  redisUrl?: string;
  /** Identifies the API key / client the limits count for; hashed, never stored as given. */
  scopeParts: Array<string | undefined>;
  dailyLimit: number;
  cacheTtlSec: number;
}

/**
 * What an `svc-config` node shares between the nodes that use it, and (with Redis) between every
 * instance running the same flows: the rate-limit schedule, the daily quota, the geocode cache and
 * the Redis connection itself. The config node owns it; nodes register to show its state in their status.
 */
export class SharedServices {
  readonly state: SharedState;
  /** The schedule of a family's rate limit: shared in Redis when configured, the gate's own otherwise. */
  readonly pacerFor: ((family: RateFamily) => Pacer) | undefined;
  readonly quota: DailyQuota | undefined;
  readonly cache: ResponseCache | undefined;
  private readonly nodes = new Set<Node>();
  private readonly counters: CounterFile | undefined;

  constructor(RED: NodeAPI, owner: Node, settings: SharedSettings) {
    const log = nodeLog(owner);
    let state: SharedState;
    try {
      state = new SharedState({ url: redisUrlOf(owner, settings.redisUrl), log });
    } catch (err) {
      // A Redis URL that is not one: the nodes still work, on this instance's own state.
      owner.error(failure(new ConfigError(catalogText('error.shared.off', { cause: causeOf(err) }))));
      state = new SharedState({ log });
    }
    this.state = state;
    warnIfStateIsLost(RED, state.configured);
    const scope = createHash('sha256')
      .update(settings.scopeParts.map((part) => part ?? '').join('\n'))
      .digest('hex')
      .slice(0, 32);
    // Single geocodes keep the key every request shared before the families had rates of their own.
    this.pacerFor = this.state.configured
      ? (family) => sharedPacer(this.state, family === 'geocode' ? `rate:${scope}` : `rate:${scope}:${family}`, new LocalPacer())
      : undefined;
    if (settings.dailyLimit > 0) {
      const userDir = (RED.settings as { userDir?: string }).userDir;
      this.counters = CounterFile.at(userDir ? path.join(userDir, QUOTA_FILE) : undefined, (err) =>
        owner.warn(translate(catalogText('warn.shared.countsNotSaved', { cause: err.message }))),
      );
      this.quota = new DailyQuota(this.state, this.counters, scope, settings.dailyLimit);
    }
    if (settings.cacheTtlSec > 0) this.cache = new ResponseCache(this.state, scope, settings.cacheTtlSec * 1000);
    this.state.onModeChange(() => {
      for (const node of this.nodes) setStatusNote(node, sharedNote(this.state));
    });
  }

  /** A node using this configuration: its status tells when shared state is unavailable or slow, until it closes. */
  register(node: Node): void {
    this.nodes.add(node);
    const note = sharedNote(this.state);
    if (note) setStatusNote(node, note);
    node.on('close', () => this.nodes.delete(node));
  }

  /** Closes the Redis connection; resolves once the daily counts are on disk. */
  async close(): Promise<void> {
    this.nodes.clear();
    this.state.close();
    await this.counters?.flushed();
  }
}

/**
 * The Redis URL to use, if any. Node-RED substitutes `${VAR}` in credentials when VAR is set; one
 * still in that form names a variable Node-RED could not find (or a Node-RED that does not substitute),
 * so the process environment is asked once more before shared state is turned off with a warning.
 */
function redisUrlOf(owner: Node, given: string | undefined): string | undefined {
  let url = (given ?? '').trim();
  const reference = ENV_REFERENCE.exec(url);
  if (reference) {
    url = (process.env[reference[1]] ?? '').trim();
    if (!url) {
      owner.warn(translate(catalogText('warn.shared.redisEnvNotSet', { name: reference[1] })));
      return undefined;
    }
  }
  return url || undefined;
}

/** The note every status carries while the config node's Redis is away or slow, in the runtime's language. */
function sharedNote(state: SharedState): string | undefined {
  if (state.mode === 'unavailable') return translate(catalogText('status.sharedUnavailable'));
  return state.slow ? translate(catalogText('status.sharedSlow')) : undefined;
}
