import type { RequestHandler, Response } from 'express';
import path from 'node:path';
import type { NodeAPI, NodeDef, Node } from '../lib/node-red/types';
import { NodeStatus } from '../lib/node-red/status';
import { Failure, failure } from '../lib/node-red/failure';
import type { SvcConfigNode } from '../lib/node-red/config';
import { countSetting, readSettings, textSetting } from '../lib/node-red/settings';
import { ConfigError } from '../lib/util/errors';
import { CatalogText, catalogText } from '../lib/util/catalog-text';
import { translate, translateWith } from '../lib/node-red/i18n';
import { isHeaderName } from '../lib/util/text';
import { HttpMounts, editorPathOf, keepRawBody, normalisePath, removeRoute, routeFor, routeSyntaxIn } from '../lib/node-red/http-node';
import { describeRouteOwner, ownRoute } from '../lib/node-red/route-owners';
import { watchWebhook } from '../lib/node-red/operations';
import { SignatureVerifier } from '../lib/webhook/signature';
import { DEFAULT_REPLAY_CAP, ReplayFile, ReplayGuard } from '../lib/webhook/replays';
import { rawBodyOf } from '../lib/webhook/raw-body';
import { ReceiverConfig, Reply, WebhookReceiver, replyTo } from '../lib/webhook/receiver';
import { WebhookAccount } from './account';
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

/** The file in Node-RED's user directory that keeps delivered webhooks until their window has passed (ReplayFile). */
const REPLAY_FILE = path.join('svc-location', 'webhook-replays.jsonl');

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
    const mounts: HttpMounts = {
      app: RED.httpNode,
      root: String(RED.settings.httpNodeRoot ?? '/'),
      adminRoot: (RED.settings as { httpAdminRoot?: string | false }).httpAdminRoot,
      admin: RED.httpAdmin,
    };
    const unroutable = routeProblem(RED, mounts, config.path);
    if (unroutable) {
      this.error(notListening(unroutable.error));
      status.show('red', 'ring', unroutable.status);
      return;
    }

    sharedConfig?.shared.register(this);
    const userDir = (RED.settings as { userDir?: string }).userDir;
    const replayFile = ReplayFile.at(userDir ? path.join(userDir, REPLAY_FILE) : undefined);
    // Per path, with and without Redis (docs/security.md): see ReplayGuard. The cap is a runtime setting (settings.js).
    const replayCap = countSetting((RED.settings as { svcWebhookReplayCap?: unknown }).svcWebhookReplayCap, DEFAULT_REPLAY_CAP);
    const receiver = new WebhookReceiver(config, new ReplayGuard(replayFile, normalisePath(config.path), sharedConfig?.shared.state, replayCap));
    const account = new WebhookAccount(this, status, { path: config.path, unsigned: config.verifier === undefined, replayFile, replayCap });
    watchWebhook(this, account);

    const handler: RequestHandler = (req, res) => {
      account.underWay(1);
      receiver
        .receive(
          req.headers,
          (limit) => rawBodyOf(req, limit),
          (message) => this.send(message),
        )
        .then((verdict) => {
          reply(res, replyTo(verdict));
          account.settle(verdict);
        })
        .catch((err: unknown) => {
          account.failed(err);
          if (!res.headersSent) res.status(500).json({ error: 'internal error' });
        })
        .finally(() => account.underWay(-1));
    };
    const errorHandler = (err: unknown, _req: unknown, res: Response, _next: unknown) => {
      account.failed(err);
      if (!res.headersSent) res.sendStatus(500);
    };

    // As the core `http in` node: the route lives on RED.httpNode (mounted at httpNodeRoot behind
    // httpNodeAuth), after any httpNodeMiddleware. No body parser of this node's runs before it reads
    // the bytes, and keepRawBody keeps them from the editor API's parser that Node-RED puts in front.
    mounts.app.post(config.path, nodeMiddleware(RED), handler, errorHandler);
    ownRoute(handler, this);
    const releaseRawBody = keepRawBody(RED.server, mounts, handler, config.maxBodyBytes);

    this.on('close', (_removed: boolean, done: () => void) => {
      receiver.close();
      account.close();
      removeRoute(mounts.app, handler);
      releaseRawBody();
      done();
    });
  }

  translateWith(RED);
  RED.nodes.registerType<Node<WebhookInCredentials>, WebhookInDef, unknown, WebhookInCredentials>('svc-webhook-in', SvcWebhookIn, {
    credentials: credentialTypes,
  });
};

function reply(res: Response, { status, body, retryAfterSec }: Reply): void {
  if (retryAfterSec !== undefined) res.set('retry-after', String(retryAfterSec));
  if (body) res.status(status).json(body);
  else res.status(status).end();
}

/**
 * Why the node cannot take POSTs at this path, if so. A subscription sends to one fixed address: a
 * pattern would match paths that other routes, the editor's among them, serve. The editor API sits in
 * front of RED.httpNode. And a route already there that takes this path handles its requests first.
 */
function routeProblem(RED: NodeAPI, mounts: HttpMounts, routePath: string): { error: CatalogText; status: CatalogText } | undefined {
  const syntax = routeSyntaxIn(routePath);
  if (syntax !== '') {
    return {
      error: catalogText('error.webhook.routePattern', { path: routePath, syntax }),
      status: catalogText('status.webhook.routePattern', { path: routePath }),
    };
  }
  const fullPath = mounts.root.replace(/\/$/, '') + routePath;
  if (editorPathOf(fullPath, mounts.adminRoot, mounts.admin) !== undefined) {
    return {
      error: catalogText('error.webhook.editorPath', { path: fullPath, root: String(mounts.adminRoot ?? '/') }),
      status: catalogText('status.webhook.editorPath', { path: fullPath }),
    };
  }
  const taken = routeFor(mounts.app, 'post', routePath);
  if (!taken) return undefined;
  const owner = describeRouteOwner(RED, taken);
  const route = `${Object.keys(taken.route?.methods ?? {})[0]?.toUpperCase() ?? 'POST'} ${String(taken.route?.path)}`;
  return {
    error: owner
      ? catalogText('error.webhook.pathInUseBy', { path: routePath, owner: owner.text })
      : catalogText('error.webhook.pathInUseByRoute', { path: routePath, route }),
    status: catalogText('status.webhook.pathInUseBy', { owner: owner ? owner.label : route }),
  };
}

/** httpNodeMiddleware from the settings (a function or an array), as the core `http in` node uses it. */
function nodeMiddleware(RED: NodeAPI): RequestHandler | RequestHandler[] {
  const configured = (RED.settings as { httpNodeMiddleware?: unknown }).httpNodeMiddleware;
  if (typeof configured === 'function' || Array.isArray(configured)) return configured as RequestHandler | RequestHandler[];
  return (_req, _res, next) => next();
}

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

/** A setting or path this node cannot listen on, reported in the shape of every failure (a ConfigError, code CONFIG_INVALID); its text says what to do. */
function notListening(text: CatalogText): Failure {
  return failure(new ConfigError(text, { saysWhatToDo: true }));
}
