import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import type { NodeAPI, NodeDef, Node } from '../lib/node-red/types';
import { NodeStatus } from '../lib/node-red/status';
import { Failure, failure } from '../lib/node-red/failure';
import type { SvcConfigNode } from '../lib/node-red/config';
import { countSetting, readSettings, textSetting } from '../lib/node-red/settings';
import { ConfigError, causeOf } from '../lib/util/errors';
import { CatalogText, catalogText } from '../lib/util/catalog-text';
import { translate, translateWith } from '../lib/node-red/i18n';
import { JsonTextProblem, isHeaderName, readJsonText } from '../lib/util/text';
import { ThrottledReport } from '../lib/util/async';
import { isCredentialName } from '../lib/util/masking';
import { editorPathOf, keepRawBody, normalisePath, rawBodyOf, removeRoute, routeFor, routeSyntaxIn } from '../lib/node-red/http-node';
import { describeRouteOwner, ownRoute } from '../lib/node-red/route-owners';
import { SIGNATURE_HEADER, SignatureRejection, SignatureVerifier, constantTimeEqual } from '../lib/state/signature';
import { Admission, DEFAULT_REPLAY_CAP, ReplayFile, ReplayGuard, Unrecorded } from '../lib/state/replays';
import { WebhookCounts, watchWebhook } from '../lib/node-red/operations';
import { migrations } from './migrations';
import { credentials as credentialTypes, defaults } from './defaults';
import type { SettingsOf } from '../lib/node-red/editor-definition';

/** `url`: the path below Node-RED's httpNodeRoot, as in the core `http in` node; `verify`: `signature` checks `svc-signature`, `none` accepts unsigned requests and warns; `server`: an optional svc-config whose Redis holds the replay cache shared by every instance. */
type WebhookInDef = NodeDef & SettingsOf<typeof defaults>;

interface WebhookInCredentials {
  secret?: string;
  /** The secret before a rotation, accepted as well until it is cleared. */
  previousSecret?: string;
  headerValue?: string;
}

interface ReceiverConfig {
  path: string;
  verifier?: SignatureVerifier;
  header?: { name: string; value: string };
  maxBodyBytes: number;
}

/** Arrays and objects nested deeper than this are refused (400 `too deep`); platform events are a few levels deep. */
const MAX_JSON_DEPTH = 128;
/** The file in Node-RED's user directory that keeps delivered webhooks until their window has passed (ReplayFile). */
const REPLAY_FILE = path.join('svc-location', 'webhook-replays.jsonl');
/** Failed requests (aborted uploads, broken connections), duplicates and requests not recorded are logged at most this often per node, with their count. */
const NOISE_LOG_INTERVAL_MS = 60_000;
/** What a 503 response asks the sender to wait before trying again, in seconds. */
const RETRY_AFTER_SEC = 5;
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

type Rejection = SignatureRejection | JsonTextProblem | 'not JSON' | 'body too large' | 'header mismatch';

/**
 * Why a request gets a 503 response: the node is closing, its delivery cannot be recorded, or the
 * path's replay record is full (the sender should try again in each case).
 */
type Unavailable = 'restarting' | 'journal unavailable' | 'replays full';

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

export = function register(RED: NodeAPI): void {
  function SvcWebhookIn(this: Node<WebhookInCredentials>, def: WebhookInDef): void {
    RED.nodes.createNode(this, def);
    def = migrations.migrate(def);
    const status = new NodeStatus(this);
    if (RED.settings.httpNodeRoot === false) {
      this.warn(translate(catalogText('warn.webhook.noHttpNodes')));
      status.show('grey', 'ring', catalogText('status.webhook.httpDisabled'));
      return;
    }
    const sharedConfig = def.server ? (RED.nodes.getNode(def.server) as SvcConfigNode | null) : null;
    // Linked to a built-in sandbox config and no secret typed: the sandbox's own webhook secret (a sandbox-only convenience).
    const sandboxSecret = sharedConfig?.builtinSandbox?.webhookSecret;
    const credentials = this.credentials ?? {};
    const config = readConfig(
      def,
      sandboxSecret && !credentials.secret && !credentials.previousSecret ? { ...credentials, secret: sandboxSecret } : credentials,
    );
    if ('problem' in config) {
      // A setting keeps it from listening: the status says which (the error line says what to do).
      this.error(notListening(catalogText('error.webhook.notListening', { cause: catalogText(config.problem, config.params) })));
      status.show('red', 'ring', catalogText('status.webhook.notListening', { reason: catalogText(SETTING_STATUS[config.problem]) }));
      return;
    }
    // A subscription sends to one fixed address: a pattern would match paths that other routes, the editor's among them, serve.
    const patternSyntax = routeSyntaxIn(config.path);
    if (patternSyntax !== '') {
      this.error(notListening(catalogText('error.webhook.routePattern', { path: config.path, syntax: patternSyntax })));
      status.show('red', 'ring', catalogText('status.webhook.routePattern', { path: config.path }));
      return;
    }
    const app = RED.httpNode;
    const nodeRoot = String(RED.settings.httpNodeRoot ?? '/');
    const fullPath = nodeRoot.replace(/\/$/, '') + config.path;
    const adminRoot = (RED.settings as { httpAdminRoot?: string | false }).httpAdminRoot;
    if (editorPathOf(fullPath, adminRoot, RED.httpAdmin) !== undefined) {
      this.error(notListening(catalogText('error.webhook.editorPath', { path: fullPath, root: String(adminRoot ?? '/') })));
      status.show('red', 'ring', catalogText('status.webhook.editorPath', { path: fullPath }));
      return;
    }
    // A route already there that takes this path handles its requests first: say whose it is.
    const taken = routeFor(app, 'post', config.path);
    if (taken) {
      const owner = describeRouteOwner(RED, taken);
      const route = `${Object.keys(taken.route?.methods ?? {})[0]?.toUpperCase() ?? 'POST'} ${String(taken.route?.path)}`;
      this.error(
        notListening(
          owner
            ? catalogText('error.webhook.pathInUseBy', { path: config.path, owner: owner.text })
            : catalogText('error.webhook.pathInUseByRoute', { path: config.path, route }),
        ),
      );
      status.show('red', 'ring', catalogText('status.webhook.pathInUseBy', { owner: owner ? owner.label : route }));
      return;
    }

    sharedConfig?.shared.register(this);
    const userDir = (RED.settings as { userDir?: string }).userDir;
    const replayFile = ReplayFile.at(userDir ? path.join(userDir, REPLAY_FILE) : undefined);
    // Per path, with and without Redis (docs/security.md): see ReplayGuard. The cap is a runtime setting (settings.js).
    const replayCap = countSetting((RED.settings as { svcWebhookReplayCap?: unknown }).svcWebhookReplayCap, DEFAULT_REPLAY_CAP);
    const replays = new ReplayGuard(replayFile, normalisePath(config.path), sharedConfig?.shared.state, replayCap);
    const unsigned = config.verifier === undefined;
    const counts = { accepted: 0, rejected: 0 };
    /** Requests that got a 503 because their delivery could not be recorded, since the journal last worked. */
    let unrecorded = 0;
    const delivered = {
      get accepted() {
        return counts.accepted;
      },
      get refused() {
        return counts.rejected;
      },
      duplicate: 0,
      journal: () => (unsigned ? 'none' : unrecorded > 0 || replayFile.ready() ? 'failing' : 'ok'),
    } satisfies WebhookCounts;
    watchWebhook(this, delivered);
    /** Requests that got a 503 because the replay record was full, since a request was last accepted (one warning each such episode). */
    let refusedFull = 0;
    let warnedConsumedBody = false;
    let closed = false;
    const showCounts = (rejection?: Rejection) => {
      const params = {
        accepted: counts.accepted,
        rejected: counts.rejected,
        reason: rejection ? catalogText('status.webhook.because', { reason: REJECTION_TEXTS[rejection] }) : '',
      };
      const text = catalogText(unsigned ? 'status.webhook.countsUnsigned' : 'status.webhook.counts', params);
      if (rejection || unsigned) status.warning(text);
      else status.done(text);
    };
    const showUnrecorded = (problem: Unrecorded) =>
      status.show(
        'red',
        'ring',
        problem.problem === 'in use'
          ? catalogText('status.webhook.journalInUse', { pid: problem.holder.pid })
          : catalogText('status.webhook.journalFailing', { count: unrecorded }),
      );
    const problemText = (problem: Unrecorded): string | CatalogText =>
      problem.problem === 'in use' ? catalogText('warn.webhook.journalHolder', { pid: problem.holder.pid, host: problem.holder.host }) : problem.cause;

    // Anyone who reaches the path can make requests fail or repeat them, and a full disk fails every
    // one: counted, logged once a minute at most.
    const noise = { failed: 0, duplicates: 0, last: undefined as string | CatalogText | undefined };
    const noiseReport = new ThrottledReport<typeof noise>((_count, tally) => {
      const last = tally.last === undefined ? '' : catalogText('warn.webhook.lastFailure', { cause: tally.last });
      const failed = catalogText('warn.webhook.noiseFailed', { count: tally.failed, last });
      const duplicates = catalogText('warn.webhook.noiseDuplicates', { count: tally.duplicates });
      // Only the kinds that happened: no "0 request(s) failed".
      const what = tally.failed === 0 ? duplicates : tally.duplicates === 0 ? failed : catalogText('warn.webhook.noiseBoth', { failed, duplicates });
      this.warn(translate(catalogText('warn.webhook.noise', { what })));
      Object.assign(tally, { failed: 0, duplicates: 0, last: undefined });
    }, NOISE_LOG_INTERVAL_MS);
    const unrecordedReport = new ThrottledReport<string | CatalogText>(
      (count, cause) => this.warn(translate(catalogText('warn.webhook.replaysNotSaved', { count, cause }))),
      NOISE_LOG_INTERVAL_MS,
    );

    if (unsigned) {
      this.warn(translate(catalogText('warn.webhook.unsigned', { path: config.path })));
      status.warning(catalogText('status.webhook.unsigned'));
    } else {
      // Said at start: a second Node-RED on this user directory, or a journal that cannot be written.
      const problem = replayFile.ready();
      if (problem?.problem === 'in use') {
        this.warn(translate(catalogText('warn.webhook.journalInUse', { path: config.path, holder: problemText(problem) })));
        showUnrecorded(problem);
      } else if (problem) {
        // Logged with the first request it fails.
        showUnrecorded(problem);
      } else {
        status.show('green', 'ring', catalogText('status.webhook.listening'));
      }
    }

    const refuse = (res: Response, statusCode: number, reason: Rejection) => {
      counts.rejected++;
      showCounts(reason);
      res.status(statusCode).json({ error: reason });
    };
    const unavailable = (res: Response, reason: Unavailable) => {
      res.set('retry-after', String(RETRY_AFTER_SEC)).status(503).json({ error: reason });
    };

    const receive = async (req: Request, res: Response) => {
      const receivedAt = Date.now();
      if (!isJsonOrUnstated(req.headers['content-type'])) return refuse(res, 400, 'not JSON');
      const body = await rawBodyOf(req, config.maxBodyBytes);
      // Closed (redeployed) while the body arrived: the sender should try again, not lose the event.
      if (closed) return unavailable(res, 'restarting');
      if (body === 'too large') return refuse(res, 413, 'body too large');
      if (body === 'consumed') {
        if (!warnedConsumedBody) {
          warnedConsumedBody = true;
          this.error(failure(translate(catalogText('error.webhook.bodyConsumed', { path: config.path }))));
        }
        res.status(500).json({ error: 'body unavailable' });
        return;
      }
      if (config.header && !headerMatches(req.headers, config.header)) return refuse(res, 401, 'header mismatch');
      // One JSON text before the digest decides anything: a length-extended body (the spec's digest
      // is plain SHA-256) is never one, so its response is the same whatever secret length was guessed.
      const json = readJsonText(body, MAX_JSON_DEPTH);
      if (!json.ok) return refuse(res, 400, json.reason);
      const verified = config.verifier?.verify(req.headers[SIGNATURE_HEADER], body, receivedAt);
      if (verified && !verified.ok) return refuse(res, 401, verified.reason);
      // Sent before the response: a 2xx means a message left this node (or, for a duplicate, left it before).
      const deliver = () => {
        if (closed) return false;
        this.send({
          payload: json.value,
          webhook: { timestamp: verified?.timestampMs, receivedAt, headers: visibleHeaders(req.headers, config.header?.name) },
        });
        return true;
      };
      const entry = verified && config.verifier ? config.verifier.replayEntry(verified) : undefined;
      const admission: Admission = entry ? await replays.admit(entry, deliver, receivedAt) : { outcome: deliver() ? 'delivered' : 'withdrawn' };
      switch (admission.outcome) {
        case 'duplicate':
          res.status(200).end();
          delivered.duplicate++;
          noise.duplicates++;
          noiseReport.note(noise);
          return;
        case 'forgotten':
          // Older than what the journal vouches for (a tolerance raised since): stale, as under the tolerance it may have been delivered under.
          return refuse(res, 401, 'stale timestamp');
        case 'withdrawn':
          return unavailable(res, 'restarting');
        case 'full':
          if (refusedFull++ === 0) this.warn(translate(catalogText('warn.webhook.replaysFull', { path: config.path, cap: replayCap })));
          status.show('red', 'ring', catalogText('status.webhook.replaysFull', { count: refusedFull }));
          return unavailable(res, 'replays full');
        case 'unrecorded':
          unrecorded++;
          unrecordedReport.note(problemText(admission));
          showUnrecorded(admission);
          return unavailable(res, 'journal unavailable');
        default:
          res.status(200).end();
          counts.accepted++;
          if (unrecorded > 0) {
            this.log(translate(catalogText('log.webhook.journalWritable', { count: unrecorded })));
            unrecorded = 0;
          }
          if (refusedFull > 0) {
            this.log(translate(catalogText('log.webhook.replaysTaken', { count: refusedFull })));
            refusedFull = 0;
          }
          showCounts();
      }
    };
    const warnFailed = (err: unknown) => {
      noise.failed++;
      noise.last = causeOf(err);
      noiseReport.note(noise);
    };
    // Requests under way: while there are several, the counts in the status are shown at most ten times a second (status.ts).
    let underWay = 0;
    const handler: RequestHandler = (req, res) => {
      status.underWay(++underWay);
      receive(req, res)
        .catch((err: unknown) => {
          warnFailed(err);
          if (!res.headersSent) res.status(500).json({ error: 'internal error' });
        })
        .finally(() => status.underWay(--underWay));
    };
    const errorHandler = (err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      warnFailed(err);
      if (!res.headersSent) res.sendStatus(500);
    };

    // As the core `http in` node: the route lives on RED.httpNode (mounted at httpNodeRoot behind
    // httpNodeAuth), after any httpNodeMiddleware. No body parser of this node's runs before it reads
    // the bytes, and keepRawBody keeps them from the editor API's parser that Node-RED puts in front.
    app.post(config.path, nodeMiddleware(RED), handler, errorHandler);
    ownRoute(handler, this);
    const releaseRawBody = keepRawBody(RED.server, { app, root: nodeRoot, adminRoot, admin: RED.httpAdmin }, handler, config.maxBodyBytes);

    this.on('close', (_removed: boolean, done: () => void) => {
      closed = true;
      status.clear();
      noiseReport.close();
      unrecordedReport.close();
      removeRoute(app, handler);
      releaseRawBody();
      done();
    });
  }

  translateWith(RED);
  RED.nodes.registerType<Node<WebhookInCredentials>, WebhookInDef, unknown, WebhookInCredentials>('svc-webhook-in', SvcWebhookIn, {
    credentials: credentialTypes,
  });
};

/** The short reason the status shows for each setting that keeps the node from listening. */
const SETTING_STATUS = {
  'error.webhook.noPath': 'status.webhook.setting.noPath',
  'error.webhook.noSecret': 'status.webhook.setting.noSecret',
  'error.webhook.headerName': 'status.webhook.setting.headerName',
  'error.webhook.headerValue': 'status.webhook.setting.headerValue',
};

/** A setting that keeps the node from listening: the text that says which (reported as a ConfigError, see `notListening`). */
interface SettingProblem {
  problem: keyof typeof SETTING_STATUS;
  params?: Record<string, string>;
}

/** The receiver the settings describe, or the setting that keeps it from listening. */
function readConfig(def: WebhookInDef, credentials: WebhookInCredentials): ReceiverConfig | SettingProblem {
  const settings = readSettings(def, defaults);
  // A saved node without a path does not listen: its default is for a node dropped in.
  const url = textSetting(def.url);
  if (url === '') return { problem: 'error.webhook.noPath' };
  const path = url.startsWith('/') ? url : `/${url}`;
  const maxBodyBytes = Math.floor(settings.positive('maxBodyKb') * 1024);
  let verifier: SignatureVerifier | undefined;
  if (def.verify !== 'none') {
    const secrets = [credentials.secret ?? '', credentials.previousSecret ?? ''];
    if (!secrets.some((secret) => secret !== '')) return { problem: 'error.webhook.noSecret' };
    verifier = new SignatureVerifier({ secrets, toleranceSec: settings.positive('tolerance') });
  }
  const headerName = settings.text('headerName');
  if (headerName === '') return { path, verifier, maxBodyBytes };
  if (!isHeaderName(headerName)) return { problem: 'error.webhook.headerName' };
  const headerValue = (credentials.headerValue ?? '').trim();
  if (headerValue === '') return { problem: 'error.webhook.headerValue', params: { name: headerName } };
  return { path, verifier, maxBodyBytes, header: { name: headerName.toLowerCase(), value: headerValue } };
}

/** httpNodeMiddleware from the settings (a function or an array), as the core `http in` node uses it. */
function nodeMiddleware(RED: NodeAPI): RequestHandler | RequestHandler[] {
  const configured = (RED.settings as { httpNodeMiddleware?: unknown }).httpNodeMiddleware;
  if (typeof configured === 'function' || Array.isArray(configured)) return configured as RequestHandler | RequestHandler[];
  return (_req, _res, next) => next();
}

/** A JSON media type, or none at all (the spec does not show the webhook's headers; the body then decides). */
function isJsonOrUnstated(contentType: string | undefined): boolean {
  const mediaType = (contentType ?? '').split(';')[0].trim();
  return mediaType === '' || JSON_MEDIA_TYPE.test(mediaType);
}

function headerMatches(headers: IncomingHttpHeaders, expected: { name: string; value: string }): boolean {
  const received = headers[expected.name];
  return typeof received === 'string' && constantTimeEqual(received.trim(), expected.value);
}

/** The request headers for `msg.webhook`, without those named like credentials (`isCredentialName`, util/masking.ts) and the custom header, whose value is a key. */
function visibleHeaders(headers: IncomingHttpHeaders, customHeader: string | undefined): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !isCredentialName(name) && name !== customHeader));
}

/** A setting or path this node cannot listen on, reported in the shape of every failure (a ConfigError, code CONFIG_INVALID); its text says what to do. */
function notListening(text: CatalogText): Failure {
  return failure(new ConfigError(text, { saysWhatToDo: true }));
}
