import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import type { NextFunction } from 'express';
import type { NodeAPI } from './types';
import type { ClientCredentials, SecretCredential } from '../platform/types';
import { CatalogText, catalogText } from '../util/catalog-text';
import { belowRoot, targetPath } from './http-node';
import { runtimeLog } from './i18n';
// Types only: erased by the compiler. The sandbox itself is required when the first sandbox config starts.
import type * as SandboxPackage from '../../../sandbox';

/**
 * The built-in sandbox (svc-config's platform 'sandbox'): the sandbox platform of sandbox/ served by this
 * Node-RED on its own HTTP server, at `{httpNodeRoot}svc-sandbox`, and reached by the config nodes over
 * loopback. The only module of nodes/ that loads sandbox/, and only when a sandbox config starts (ESLint
 * names it as the one exception), so a Node-RED whose flows use the real platform loads none of it.
 *
 * One sandbox per runtime, counted by the config nodes that lease it: the first starts it (its
 * credentials and state in `{userDir}/svc-location/`), the last one's release stops it, saves its state,
 * and its routes then pass every request on (Express responds 404).
 */

/** The sandbox's path below httpNodeRoot. */
export const SANDBOX_PATH = 'svc-sandbox';
/** The folder under userDir that holds the sandbox's credentials (`sandbox.json`) and state. */
export const SANDBOX_FOLDER = 'svc-location';
export const STATE_FILE = 'sandbox-state.json';
const SAVE_EVERY_MS = 1000;
/** Requests the sandbox keeps in its log (tests read it; a long-running Node-RED must not grow it). */
const LOG_LIMIT = 100;

/** What a config node needs to use the built-in sandbox. */
export interface BuiltinSandboxConnection {
  /** Base, token and words URL alike: the sandbox on this Node-RED, over loopback. */
  url: string;
  audience: string;
  projectId: string;
  credentials: Required<Pick<ClientCredentials, 'clientId' | SecretCredential>>;
  /** The secret subscriptions sign with when they name none, and svc-webhook-in checks when it has none typed. */
  webhookSecret: string;
  /** With Node-RED's https: its certificate is not checked on this loopback connection (it names the host's public name, not 127.0.0.1). */
  tls?: ConnectionOptions;
  /** The address of a path of this Node-RED's httpNode (`/svc-round-trip`), as the sandbox reaches it. */
  ownUrl(nodePath: string): string;
}

/** A config node's hold on the built-in sandbox: its connection, or why this Node-RED cannot serve it. */
export type BuiltinSandboxLease = ({ connection: BuiltinSandboxConnection } | { unavailable: CatalogText }) & { release(): Promise<void> };

interface Running {
  sandbox: SandboxPackage.Sandbox;
  state?: SandboxPackage.SandboxStateFile;
  saver: NodeJS.Timeout;
  connection: BuiltinSandboxConnection;
  leases: number;
}

/** The route on RED.httpNode (added once per runtime; it serves while a sandbox runs) and the running sandbox. */
interface Mount {
  running?: Running;
}
const mounts = new WeakMap<object, Mount>();

/** Node-RED's settings that decide whether and where the sandbox can be reached (settings.js names). */
interface ServerSettings {
  userDir?: string;
  uiPort?: number | string;
  uiHost?: string;
  httpNodeRoot?: string | false;
  httpNodeAuth?: unknown;
  https?: unknown;
}

/** Leases the runtime's built-in sandbox, starting it for the first lease. */
export function leaseBuiltinSandbox(RED: NodeAPI): BuiltinSandboxLease {
  const settings = RED.settings as unknown as ServerSettings;
  const address = loopbackAddress(settings, RED.server);
  if ('unavailable' in address) return { unavailable: address.unavailable, release: async () => undefined };
  const mount = mountOn(RED, settings);
  const running =
    mount.running ??
    start(mount, settings.userDir, address, {
      warn: (line) => runtimeLog(RED).warn(catalogText('config.sandbox.deliveryFailed', { line })),
      info: (line) => runtimeLog(RED).info(catalogText('config.sandbox.delivered', { line })),
    });
  running.leases++;
  let released = false;
  return {
    connection: running.connection,
    release: async () => {
      if (released) return;
      released = true;
      if (--running.leases > 0) return;
      // Stops serving and saves at once, so a sandbox a redeploy starts next reads what this one leaves
      // (and nothing this one does while closing overwrites what that one writes).
      if (mount.running === running) mount.running = undefined;
      clearInterval(running.saver);
      running.state?.save();
      await running.sandbox.close();
    },
  };
}

interface Address {
  /** `http(s)://host:port{httpNodeRoot}`, ending in a slash. */
  nodeRoot: string;
  tls?: ConnectionOptions;
}

/**
 * Where this Node-RED's httpNode is reached over loopback: the port the server listens on (else
 * uiPort), on 127.0.0.1 unless uiHost names one address; https when the server is. Unavailable
 * without httpNode (httpNodeRoot false), behind httpNodeAuth (the client cannot log in), or without a port.
 */
function loopbackAddress(settings: ServerSettings, server: Server | undefined): Address | { unavailable: CatalogText } {
  if (settings.httpNodeRoot === false) return { unavailable: catalogText('config.sandbox.noHttpNode') };
  if (settings.httpNodeAuth) return { unavailable: catalogText('config.sandbox.httpNodeAuth') };
  const listening = server?.address();
  const port = listening && typeof listening === 'object' ? listening.port : Number(settings.uiPort);
  if (!Number.isInteger(port) || port <= 0) return { unavailable: catalogText('config.sandbox.noPort') };
  const host = !settings.uiHost || settings.uiHost === '0.0.0.0' || settings.uiHost === '::' ? '127.0.0.1' : settings.uiHost;
  const secure = !!settings.https || server instanceof https.Server;
  const root = `/${String(settings.httpNodeRoot ?? '/').replace(/^\/+|\/+$/g, '')}/`.replace(/^\/\/$/, '/');
  return {
    nodeRoot: `${secure ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}${root}`,
    tls: secure ? { rejectUnauthorized: false } : undefined,
  };
}

/** The route of the runtime (added the first time): the running sandbox handles its requests, and with none they pass on. */
function mountOn(RED: NodeAPI, settings: ServerSettings): Mount {
  const app = RED.httpNode;
  let mount = mounts.get(app);
  if (mount) return mount;
  const server = RED.server as Server | undefined;
  const root = String(settings.httpNodeRoot ?? '/');
  // Node-RED's editor API parses JSON and form bodies in front of RED.httpNode; the sandbox reads its own.
  const unread = (req: IncomingMessage) => {
    if (!created.running) return;
    const target = targetPath(req.url ?? '');
    const below = target === undefined ? undefined : belowRoot(target, root);
    if (below !== undefined && (below.toLowerCase() === `/${SANDBOX_PATH}` || below.toLowerCase().startsWith(`/${SANDBOX_PATH}/`))) {
      (req as IncomingMessage & { _body?: boolean })._body = true;
    }
  };
  // Added once, as the route: both stay for the runtime's life and act only while a sandbox runs.
  server?.prependListener('request', unread);
  const created: Mount = {};
  mount = created;
  app.use(`/${SANDBOX_PATH}`, (req: IncomingMessage, res: ServerResponse, next: NextFunction) => {
    if (created.running) created.running.sandbox.handle(req, res);
    else next();
  });
  mounts.set(app, mount);
  return mount;
}

/** Starts the sandbox: its credentials and state from `{userDir}/svc-location/` (in memory without a userDir), the spec's limits and durations on, its deliveries in `log`. */
function start(mount: Mount, userDir: string | undefined, address: Address, log: Required<Pick<SandboxPackage.SandboxOptions, 'warn' | 'info'>>): Running {
  // Loaded here, on the first sandbox config only (test/sandbox/unloaded_spec.ts).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createSandbox, generatedCredentials, SandboxStateFile, SANDBOX_DEFAULTS, SPEC_GEOCODE_LIMITS } = require('../../../sandbox') as typeof SandboxPackage;
  const folder = userDir ? path.join(userDir, SANDBOX_FOLDER) : undefined;
  const credentials = generatedCredentials(folder);
  const sandbox = createSandbox({
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    apiKeys: { [credentials.apiKey]: ['geocode', 'bulk', 'isoline', 'sequence', 'routing', 'pubsub'] },
    pubsubApiKey: credentials.pubsubApiKey,
    typicalDurations: true,
    geocodeRatePerMinute: SPEC_GEOCODE_LIMITS.perMinute,
    geocodeDailyLimit: SPEC_GEOCODE_LIMITS.perDay,
    logLimit: LOG_LIMIT,
    // Each webhook delivered (info) and each failed attempt (warn) is a line in Node-RED's log.
    ...log,
  });
  const url = `${address.nodeRoot}${SANDBOX_PATH}`;
  sandbox.url = url;
  const state = folder ? new SandboxStateFile(sandbox, path.join(folder, STATE_FILE)) : undefined;
  state?.load();
  const running: Running = {
    sandbox,
    state,
    saver: setInterval(() => state?.save(), SAVE_EVERY_MS),
    connection: {
      url,
      audience: SANDBOX_DEFAULTS.audience,
      projectId: SANDBOX_DEFAULTS.projectId,
      credentials: {
        clientId: credentials.clientId,
        clientSecret: credentials.clientSecret,
        apiKey: credentials.apiKey,
        pubsubApiKey: credentials.pubsubApiKey,
      },
      webhookSecret: credentials.webhookSecret,
      tls: address.tls,
      ownUrl: (nodePath) => `${address.nodeRoot}${nodePath.replace(/^\/+/, '')}`,
    },
    leases: 0,
  };
  running.saver.unref();
  mount.running = running;
  return running;
}
