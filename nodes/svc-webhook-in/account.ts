import type { Node } from '../lib/node-red/types';
import type { NodeStatus } from '../lib/node-red/status';
import { failure } from '../lib/node-red/failure';
import type { WebhookCounts } from '../lib/node-red/operations';
import { translate } from '../lib/node-red/i18n';
import { causeOf } from '../lib/util/errors';
import { CatalogText, catalogText } from '../lib/util/catalog-text';
import { ThrottledReport } from '../lib/util/async';
import type { ReplayFile, Unrecorded } from '../lib/webhook/replays';
import type { Rejection, Verdict } from '../lib/webhook/receiver';

/** Failed requests (aborted uploads, broken connections), duplicates and requests not recorded are logged at most this often per node, with their count. */
const NOISE_LOG_INTERVAL_MS = 60_000;

/**
 * What the status says for each refusal, in the runtime's language. The HTTP response keeps the reason
 * code itself (`{"error": "stale timestamp"}`): the sender is a program, and its logs should read the same everywhere.
 */
const REJECTION_TEXTS: Record<Rejection, CatalogText> = {
  'missing signature': catalogText('status.webhook.rejection.missingSignature'),
  'malformed signature': catalogText('status.webhook.rejection.malformedSignature'),
  'stale timestamp': catalogText('status.webhook.rejection.staleTimestamp'),
  'future timestamp': catalogText('status.webhook.rejection.futureTimestamp'),
  'signature mismatch': catalogText('status.webhook.rejection.signatureMismatch'),
  'not JSON': catalogText('status.webhook.rejection.notJson'),
  'invalid JSON': catalogText('status.webhook.rejection.invalidJson'),
  'too deep': catalogText('status.webhook.rejection.tooDeep'),
  'body too large': catalogText('status.webhook.rejection.bodyTooLarge'),
  'header mismatch': catalogText('status.webhook.rejection.headerMismatch'),
};

/**
 * What the node tells of its requests: its counts (in its status and to the operations endpoints),
 * each refusal's reason, the journal's state, and the noise (failed requests, duplicates, requests
 * not recorded) logged at most once a minute with its count.
 */
export class WebhookAccount implements WebhookCounts {
  accepted = 0;
  refused = 0;
  duplicate = 0;
  /** Requests that got a 503 because their delivery could not be recorded, since the journal last worked. */
  private unrecorded = 0;
  /** Requests that got a 503 because the replay record was full, since a request was last accepted (one warning each such episode). */
  private refusedFull = 0;
  private warnedConsumedBody = false;
  /** Requests under way: while there are several, the counts in the status are shown at most ten times a second (status.ts). */
  private requests = 0;
  // Anyone who reaches the path can make requests fail or repeat them, and a full disk fails every one.
  private readonly noise = { failed: 0, duplicates: 0, last: undefined as string | CatalogText | undefined };
  private readonly noiseReport: ThrottledReport<WebhookAccount['noise']>;
  private readonly unrecordedReport: ThrottledReport<string | CatalogText>;

  constructor(
    private readonly node: Node,
    private readonly status: NodeStatus,
    private readonly receiver: { path: string; unsigned: boolean; replayFile: ReplayFile; replayCap: number },
  ) {
    this.noiseReport = new ThrottledReport<WebhookAccount['noise']>((_count, tally) => {
      const last = tally.last === undefined ? '' : catalogText('warn.webhook.lastFailure', { cause: tally.last });
      const failed = catalogText('warn.webhook.noiseFailed', { count: tally.failed, last });
      const duplicates = catalogText('warn.webhook.noiseDuplicates', { count: tally.duplicates });
      // Only the kinds that happened: no "0 request(s) failed".
      const what = tally.failed === 0 ? duplicates : tally.duplicates === 0 ? failed : catalogText('warn.webhook.noiseBoth', { failed, duplicates });
      node.warn(translate(catalogText('warn.webhook.noise', { what })));
      Object.assign(tally, { failed: 0, duplicates: 0, last: undefined });
    }, NOISE_LOG_INTERVAL_MS);
    this.unrecordedReport = new ThrottledReport<string | CatalogText>(
      (count, cause) => node.warn(translate(catalogText('warn.webhook.replaysNotSaved', { count, cause }))),
      NOISE_LOG_INTERVAL_MS,
    );
    if (receiver.unsigned) {
      node.warn(translate(catalogText('warn.webhook.unsigned', { path: receiver.path })));
      status.warning(catalogText('status.webhook.unsigned'));
      return;
    }
    // Said at start: a second Node-RED on this user directory, or a journal that cannot be written (logged with the first request it fails).
    const problem = receiver.replayFile.ready();
    if (problem?.problem === 'in use') node.warn(translate(catalogText('warn.webhook.journalInUse', { path: receiver.path, holder: problemText(problem) })));
    if (problem) this.showUnrecorded(problem);
    else status.show('green', 'ring', catalogText('status.webhook.listening'));
  }

  journal(): 'ok' | 'failing' | 'none' {
    if (this.receiver.unsigned) return 'none';
    return this.unrecorded > 0 || this.receiver.replayFile.ready() ? 'failing' : 'ok';
  }

  underWay(change: 1 | -1): void {
    this.requests += change;
    this.status.underWay(this.requests);
  }

  settle(verdict: Verdict): void {
    switch (verdict.outcome) {
      case 'refused':
        this.refused++;
        this.showCounts(verdict.reason);
        return;
      case 'consumed':
        if (!this.warnedConsumedBody) {
          this.warnedConsumedBody = true;
          this.node.error(failure(translate(catalogText('error.webhook.bodyConsumed', { path: this.receiver.path }))));
        }
        return;
      case 'duplicate':
        this.duplicate++;
        this.noise.duplicates++;
        this.noiseReport.note(this.noise);
        return;
      case 'withdrawn':
        return;
      case 'full':
        if (this.refusedFull++ === 0) {
          this.node.warn(translate(catalogText('warn.webhook.replaysFull', { path: this.receiver.path, cap: this.receiver.replayCap })));
        }
        this.status.show('red', 'ring', catalogText('status.webhook.replaysFull', { count: this.refusedFull }));
        return;
      case 'unrecorded':
        this.unrecorded++;
        this.unrecordedReport.note(problemText(verdict));
        this.showUnrecorded(verdict);
        return;
      case 'delivered':
        this.accepted++;
        if (this.unrecorded > 0) {
          this.node.log(translate(catalogText('log.webhook.journalWritable', { count: this.unrecorded })));
          this.unrecorded = 0;
        }
        if (this.refusedFull > 0) {
          this.node.log(translate(catalogText('log.webhook.replaysTaken', { count: this.refusedFull })));
          this.refusedFull = 0;
        }
        this.showCounts();
    }
  }

  /** A request that failed on the way (an aborted upload, a broken connection): counted with the noise. */
  failed(err: unknown): void {
    this.noise.failed++;
    this.noise.last = causeOf(err);
    this.noiseReport.note(this.noise);
  }

  close(): void {
    this.status.clear();
    this.noiseReport.close();
    this.unrecordedReport.close();
  }

  private showCounts(rejection?: Rejection): void {
    const params = {
      accepted: this.accepted,
      rejected: this.refused,
      reason: rejection ? catalogText('status.webhook.because', { reason: REJECTION_TEXTS[rejection] }) : '',
    };
    const text = catalogText(this.receiver.unsigned ? 'status.webhook.countsUnsigned' : 'status.webhook.counts', params);
    if (rejection || this.receiver.unsigned) this.status.warning(text);
    else this.status.done(text);
  }

  private showUnrecorded(problem: Unrecorded): void {
    this.status.show(
      'red',
      'ring',
      problem.problem === 'in use'
        ? catalogText('status.webhook.journalInUse', { pid: problem.holder.pid })
        : catalogText('status.webhook.journalFailing', { count: this.unrecorded }),
    );
  }
}

function problemText(problem: Unrecorded): string | CatalogText {
  return problem.problem === 'in use' ? catalogText('warn.webhook.journalHolder', { pid: problem.holder.pid, host: problem.holder.host }) : problem.cause;
}
