import type { ConnectionOptions } from 'node:tls';
import type { Request, Response } from 'express';
import type { NodeAPI } from './types';
import type { ConnectionSettings, DeployedConnection, SvcConfigNode } from './config';
import { PlatformClient } from '../platform/client';
import type { ClientCredentials, ProxySettings, SecretCredential } from '../platform/types';
import { CREDENTIALS, Credential, Plan, TEST_LIMITS, checkCredentials } from '../platform/connection-test';
import { CatalogText, catalogText } from '../util/catalog-text';
import { checkSharedState } from '../state/shared-check';
import { translate } from './i18n';
import { SharedResult, auditText, replyFor, retypeRedisUrl, sharedResult } from './test-connection-report';
import { BuiltinSandboxLease, leaseBuiltinSandbox } from './builtin-sandbox';

/** A test's client: one attempt per check, never queued behind the node's own requests, no sandbox URL of its own. */
const TEST_CLIENT = {
  ...TEST_LIMITS,
  sandboxUrl: '',
  ratePerMinute: 0,
  maxConcurrency: 0,
  maxQueue: CREDENTIALS.length,
  maxRetries: 0,
  tokenLifetimeSec: 3600,
} as const;

/** The editor's "Test connection" (`POST /svc-config/test`): who may call it, which stored secrets a call may use, what it audits. */

/** How a TLS or proxy node id of the request becomes options (running nodes of that type only). */
interface ConnectionResolvers {
  tls(id: string): ConnectionOptions | undefined;
  proxy(id: string): ProxySettings | undefined;
}

/** Placeholder the editor sends for a password that the user has not changed. */
const UNCHANGED_PASSWORD = '__PWRD__';
/** A property that is a whole `${NAME}`, which Node-RED replaces by the variable when it creates the node. */
const ENV_REFERENCE = /^\$\{(\S+)\}$/;
const NO_CONFIG_NODE = '_ADD_';

/** The secret field of each credential, and the settings it goes with: a stored secret is used only while they are as deployed. */
const SECRETS: Record<Credential, { field: SecretCredential; destination: Array<keyof ConnectionSettings> }> = {
  token: { field: 'clientSecret', destination: ['authUrl', 'audience'] },
  apiKey: { field: 'apiKey', destination: ['baseUrl'] },
  topicsKey: { field: 'pubsubApiKey', destination: ['baseUrl'] },
};
const ROUTE: Array<keyof ConnectionSettings> = ['proxy', 'tls'];
/** Where a test's requests go: a node's own addresses when these are as deployed. */
const ADDRESSES: Array<keyof ConnectionSettings> = ['baseUrl', 'authUrl', ...ROUTE];
const TEXT_SETTINGS = ['baseUrl', 'authUrl', 'audience', 'projectId'] as const;

const SETTING_NAMES: Record<keyof ConnectionSettings, string> = {
  baseUrl: 'setting.baseUrl',
  authUrl: 'setting.authUrl',
  audience: 'setting.audience',
  projectId: 'setting.projectId',
  tls: 'setting.tls',
  proxy: 'setting.proxy',
};

interface TestRequest {
  id: string;
  settings: ConnectionSettings;
  clientId: string;
  secrets: Record<Credential, string>;
  /** The Redis URL as typed ('' for none, UNCHANGED_PASSWORD for the stored one), `${NAME}` read as the deployed node reads it. */
  redisUrl: string;
}

interface AuditLog {
  audit(entry: Record<string, unknown>, req: Request): void;
}

/** The route handler; `needsPermission('svc-config.write')` runs before it. */
export function testConnectionHandler(RED: NodeAPI, resolvers: ConnectionResolvers): (req: Request, res: Response) => void {
  const audit = (entry: Record<string, unknown>, req: Request) => (RED.log as unknown as AuditLog).audit({ event: 'svc-config.test', ...entry }, req);
  return (req, res) => {
    // A form-encoded or text body is what a cross-site page can send without asking: only JSON runs.
    if (!req.is('application/json')) {
      audit({ id: idOf(req.body), result: 'unsupported-media-type' }, req);
      res.status(415).json({ ok: false, code: 'UNSUPPORTED_MEDIA_TYPE', statusCode: 415, message: translate(catalogText('test.jsonOnly')) });
      return;
    }
    let test: PreparedTest | Refusal;
    try {
      test = prepareTest(RED, req.body, resolvers);
    } catch (err) {
      // Nothing was sent (a proxy or TLS node that cannot be used, say): responded to and audited all the same.
      audit({ id: idOf(req.body), result: 'error' }, req);
      res.status(500).json({ ok: false, code: 'CONFIG_INVALID', statusCode: null, message: translate(catalogText('test.failed.setup')) });
      RED.log.warn(String(err));
      return;
    }
    if ('refused' in test) {
      // Nothing was sent: the settings name environment variables this test may not read.
      audit({ id: test.id, result: 'variables-refused' }, req);
      res.json({ ok: false, code: 'INVALID_INPUT', statusCode: null, message: translate(test.refused), checks: [] });
      return;
    }
    const { id, client, plan, shared, lease } = test;
    Promise.all([checkCredentials(client, plan), shared])
      .then(([platform, sharedResult]) => {
        const results = sharedResult ? [...platform, sharedResult] : platform;
        const reply = replyFor(results);
        // The built-in sandbox says so first: its ✓ is the sandbox's, not the platform's.
        if (lease) reply.message = translate(catalogText('test.sandbox', { checks: reply.message }));
        audit({ id, result: reply.ok ? 'ok' : 'failed', checks: Object.fromEntries(results.map((r) => [r.credential, auditText(r)])) }, req);
        res.json(reply);
      })
      .finally(() => Promise.all([client.close(), lease?.release()]))
      .catch((err: unknown) => RED.log.warn(String(err)));
  };
}

interface PreparedTest {
  id: string;
  client: PlatformClient;
  plan: Plan;
  shared: Promise<SharedResult> | undefined;
  /** With the built-in sandbox: held while the test runs. */
  lease?: BuiltinSandboxLease;
}

interface Refusal {
  id: string;
  refused: CatalogText;
}

/** The client a test runs with and what it checks, or a refusal when settings name environment variables it may not read. */
function prepareTest(RED: NodeAPI, body: unknown, resolvers: ConnectionResolvers): PreparedTest | Refusal {
  const node = runningNode(RED, idOf(body) ?? '');
  if ((body as { platform?: unknown } | undefined)?.platform === 'sandbox') return prepareSandboxTest(RED, readRequest(body), node);
  const deployed = node?.connection;
  const typed = readRequest(body);
  const env = node ? (name: string) => RED.util.getSetting(node, name) : undefined;
  const request = withVariables(typed, deployed, env);
  if (!request) {
    const settings = TEXT_SETTINGS.filter((setting) => ENV_REFERENCE.test(typed.settings[setting]));
    return { id: typed.id, refused: catalogText('test.variablesRefused', { settings: settings.map((setting) => catalogText(SETTING_NAMES[setting])) }) };
  }
  const sameRoute = !!deployed && ROUTE.every((setting) => request.settings[setting] === deployed.settings[setting]);
  const { plan, credentials } = planChecks(request, deployed);
  const client = new PlatformClient({
    baseUrl: request.settings.baseUrl,
    authUrl: request.settings.authUrl,
    audience: request.settings.audience,
    projectId: request.settings.projectId,
    credentials,
    ...TEST_CLIENT,
    // With a stored secret the request goes the deployed node's way; ids the request names are used only without one.
    tls: sameRoute ? deployed.tls : resolvers.tls(request.settings.tls),
    proxy: sameRoute ? deployed.proxy : resolvers.proxy(request.settings.proxy),
  });
  return { id: request.id, client, plan, shared: sharedCheck(request.redisUrl, node, env) };
}

/** A test of the built-in sandbox with its own credentials (not the dialog's); refused when this Node-RED cannot serve one. */
function prepareSandboxTest(RED: NodeAPI, typed: TestRequest, node: SvcConfigNode | undefined): PreparedTest | Refusal {
  const lease = leaseBuiltinSandbox(RED);
  if (!('connection' in lease)) {
    return { id: typed.id, refused: catalogText('config.sandboxUnavailable', { reason: lease.unavailable }) };
  }
  const { url, audience, projectId, credentials, tls } = lease.connection;
  const client = new PlatformClient({
    baseUrl: url,
    authUrl: url,
    audience,
    projectId,
    credentials,
    ...TEST_CLIENT,
    tls,
  });
  const plan = Object.fromEntries(CREDENTIALS.map((credential) => [credential, { check: true }])) as Plan;
  const env = node ? (name: string) => RED.util.getSetting(node, name) : undefined;
  return { id: typed.id, client, plan, shared: sharedCheck(typed.redisUrl, node, env), lease };
}

/**
 * The shared-state check of the typed Redis URL or the running node's stored one (the URL is the whole destination). A
 * typed `${NAME}` is read only when it gives the running node's own Redis URL: a variable's value never goes elsewhere.
 */
function sharedCheck(
  typed: string,
  node: SvcConfigNode | undefined,
  env: ((name: string) => string | undefined) | undefined,
): Promise<SharedResult> | undefined {
  if (typed === '') return undefined;
  const resolve = (value: string) => {
    const name = ENV_REFERENCE.exec(value)?.[1];
    return name === undefined ? value : (env?.(name) ?? '').trim();
  };
  const stored = resolve(node?.credentials.redisUrl ?? '');
  const reference = ENV_REFERENCE.test(typed);
  if (!node && (typed === UNCHANGED_PASSWORD || reference)) return Promise.resolve(retypeRedisUrl());
  if (reference && (stored === '' || resolve(typed) !== stored)) return Promise.resolve(retypeRedisUrl());
  const url = typed === UNCHANGED_PASSWORD || reference ? stored : typed;
  if (url === '') return undefined;
  return checkSharedState(url).then(sharedResult);
}

function idOf(body: unknown): string | undefined {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The request's values as typed: secrets are never read from the environment. */
function readRequest(body: unknown): TestRequest {
  const record = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const given = (record.credentials && typeof record.credentials === 'object' ? record.credentials : {}) as Record<string, unknown>;
  const nodeId = (value: unknown) => (text(value) === NO_CONFIG_NODE ? '' : text(value));
  const redisUrl = text(given.redisUrl).trim();
  return {
    id: text(record.id),
    settings: {
      baseUrl: text(record.baseUrl),
      authUrl: text(record.authUrl),
      audience: text(record.audience),
      projectId: text(record.projectId),
      tls: nodeId(record.tls),
      proxy: nodeId(record.proxy),
    },
    clientId: text(given.clientId),
    secrets: Object.fromEntries(CREDENTIALS.map((credential) => [credential, text(given[SECRETS[credential].field])])) as TestRequest['secrets'],
    redisUrl,
  };
}

/**
 * The request with its environment variables read as Node-RED reads them for the running node, or undefined when it may
 * not: only a test of that node's stored secret at its own addresses as deployed, where the values already go, may read
 * them. Otherwise a variable's value would go wherever the caller says.
 */
function withVariables(
  typed: TestRequest,
  deployed: DeployedConnection | undefined,
  env: ((name: string) => string | undefined) | undefined,
): TestRequest | undefined {
  if (!TEXT_SETTINGS.some((setting) => ENV_REFERENCE.test(typed.settings[setting]))) return typed;
  if (!env || !deployed) return undefined;
  const settings = { ...typed.settings };
  for (const setting of TEXT_SETTINGS) {
    const name = ENV_REFERENCE.exec(settings[setting])?.[1];
    const value = name === undefined ? undefined : env(name);
    if (value !== undefined) settings[setting] = value;
  }
  const request = { ...typed, settings };
  const ownAddresses = ADDRESSES.every((setting) => settings[setting] === deployed.settings[setting]);
  const { plan } = planChecks(request, deployed);
  const storedSecret = CREDENTIALS.some((credential) => typed.secrets[credential] === UNCHANGED_PASSWORD && plan[credential].check);
  return ownAddresses && storedSecret ? request : undefined;
}

/** The svc-config node with this id, if it runs (deployed, enabled, on an enabled tab, not inside a subflow). */
function runningNode(RED: NodeAPI, id: string): SvcConfigNode | undefined {
  const node = id ? (RED.nodes.getNode(id) as SvcConfigNode | null) : null;
  return node?.type === 'svc-config' ? node : undefined;
}

/** Which credential is checked with which secret: typed, or the deployed node's stored one only while its settings are as deployed. */
function planChecks(request: TestRequest, deployed: DeployedConnection | undefined): { plan: Plan; credentials: ClientCredentials } {
  const credentials: ClientCredentials = { clientId: request.clientId };
  const plan = {} as Plan;
  for (const credential of CREDENTIALS) {
    const { field, destination } = SECRETS[credential];
    const given = request.secrets[credential];
    if (given === '') {
      plan[credential] = { check: false, notSet: true };
    } else if (given !== UNCHANGED_PASSWORD) {
      credentials[field] = given;
      plan[credential] = { check: true };
    } else if (!deployed) {
      plan[credential] = { check: false, retype: { kind: 'notRunning' } };
    } else {
      const changed = [...destination, ...ROUTE].filter((setting) => request.settings[setting] !== deployed.settings[setting]);
      const stored = deployed.credentials[field];
      if (changed.length > 0) {
        plan[credential] = { check: false, retype: { kind: 'changed', settings: changed.map((setting) => catalogText(SETTING_NAMES[setting])) } };
      } else if (!stored) {
        plan[credential] = { check: false, notSet: true };
      } else {
        credentials[field] = stored;
        plan[credential] = { check: true };
      }
    }
  }
  return { plan, credentials };
}
