import type { ConnectionOptions } from 'node:tls';
import type { Request, Response } from 'express';
import type { Node, NodeAPI } from './types';
import type { ConnectionSettings, DeployedConnection, SvcConfigNode } from './config';
import { PlatformClient } from '../platform/client';
import type { ClientCredentials, ProxySettings } from '../platform/types';
import { CREDENTIALS, CheckResult, Credential, Plan, TEST_LIMITS, checkCredentials } from '../platform/connection-test';
import { CatalogText, catalogText } from '../util/catalog-text';
import { translate } from './i18n';

/**
 * The editor's "Test connection" (`POST /svc-config/test`), the Node-RED side: who may call it, which
 * stored secrets a call may use, and what it responds with and audits. The checks themselves are
 * `platform/connection-test.ts`.
 */

/** How a TLS or proxy node id of the request becomes options (running nodes of that type only). */
export interface ConnectionResolvers {
  tls(id: string): ConnectionOptions | undefined;
  proxy(id: string): ProxySettings | undefined;
}

/** Placeholder the editor sends for a password that the user has not changed. */
const UNCHANGED_PASSWORD = '__PWRD__';
/** A property that is a whole `${NAME}`, which Node-RED replaces by the variable when it creates the node. */
const ENV_REFERENCE = /^\$\{(\S+)\}$/;
/** What a config selector of the editor holds when nothing is chosen. */
const NO_CONFIG_NODE = '_ADD_';

/** The secret field of each credential, and the settings it goes with: a stored secret is used only while they are as deployed. */
const SECRETS: Record<Credential, { field: 'clientSecret' | 'apiKey' | 'pubsubApiKey'; destination: Array<keyof ConnectionSettings> }> = {
  token: { field: 'clientSecret', destination: ['authUrl', 'audience'] },
  apiKey: { field: 'apiKey', destination: ['baseUrl'] },
  topicsKey: { field: 'pubsubApiKey', destination: ['baseUrl'] },
};
/** Settings that decide the way every request goes. */
const ROUTE: Array<keyof ConnectionSettings> = ['proxy', 'tls'];

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
    let test: PreparedTest;
    try {
      test = prepareTest(RED, req.body, resolvers);
    } catch (err) {
      // Nothing was sent (a proxy or TLS node that cannot be used, say): responded to and audited all the same.
      audit({ id: idOf(req.body), result: 'error' }, req);
      res.status(500).json({ ok: false, code: 'CONFIG_INVALID', statusCode: null, message: translate(catalogText('test.failed.setup')) });
      RED.log.warn(String(err));
      return;
    }
    const { id, client, plan } = test;
    checkCredentials(client, plan)
      .then((results) => {
        const reply = replyFor(results);
        audit({ id, result: reply.ok ? 'ok' : 'failed', checks: Object.fromEntries(results.map((r) => [r.credential, auditText(r)])) }, req);
        res.json(reply);
      })
      .finally(() => client.close())
      .catch((err: unknown) => RED.log.warn(String(err)));
  };
}

interface PreparedTest {
  id: string;
  client: PlatformClient;
  plan: Plan;
}

/** The client a test runs with, and what it checks: the dialog's values, and stored secrets as `planChecks` allows. */
function prepareTest(RED: NodeAPI, body: unknown, resolvers: ConnectionResolvers): PreparedTest {
  const node = runningNode(RED, idOf(body) ?? '');
  // Without a running node Node-RED's getSetting reads the process environment.
  const request = readRequest(body, (name) => RED.util.getSetting(node as Node, name));
  const deployed = node?.connection;
  const sameRoute = !!deployed && ROUTE.every((setting) => request.settings[setting] === deployed.settings[setting]);
  const { plan, credentials } = planChecks(request, deployed);
  const client = new PlatformClient({
    baseUrl: request.settings.baseUrl,
    authUrl: request.settings.authUrl,
    sandboxUrl: '',
    audience: request.settings.audience,
    projectId: request.settings.projectId,
    credentials,
    ...TEST_LIMITS,
    ratePerMinute: 0,
    maxConcurrency: 0,
    maxQueue: CREDENTIALS.length,
    maxRetries: 0,
    tokenLifetimeSec: 3600,
    // With a stored secret the request goes the deployed node's way; ids the request names are used only without one.
    tls: sameRoute ? deployed.tls : resolvers.tls(request.settings.tls),
    proxy: sameRoute ? deployed.proxy : resolvers.proxy(request.settings.proxy),
  });
  return { id: request.id, client, plan };
}

function idOf(body: unknown): string | undefined {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * The request's values. A setting that names an environment variable (`${NAME}`) is read as Node-RED
 * reads it for the deployed node (its flow's env, then the process's), so it compares equal; secrets
 * are taken as typed, never from the environment.
 */
function readRequest(body: unknown, env: (name: string) => string | undefined): TestRequest {
  const record = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const given = (record.credentials && typeof record.credentials === 'object' ? record.credentials : {}) as Record<string, unknown>;
  const nodeId = (value: unknown) => (text(value) === NO_CONFIG_NODE ? '' : text(value));
  const setting = (value: unknown) => {
    const name = ENV_REFERENCE.exec(text(value))?.[1];
    return (name === undefined ? undefined : env(name)) ?? text(value);
  };
  return {
    id: text(record.id),
    settings: {
      baseUrl: setting(record.baseUrl),
      authUrl: setting(record.authUrl),
      audience: setting(record.audience),
      projectId: setting(record.projectId),
      tls: nodeId(record.tls),
      proxy: nodeId(record.proxy),
    },
    clientId: text(given.clientId),
    secrets: { token: text(given.clientSecret), apiKey: text(given.apiKey), topicsKey: text(given.pubsubApiKey) },
  };
}

/** The svc-config node with this id, if it runs (deployed, enabled, on an enabled tab, not inside a subflow). */
function runningNode(RED: NodeAPI, id: string): SvcConfigNode | undefined {
  const node = id ? (RED.nodes.getNode(id) as SvcConfigNode | null) : null;
  return node?.type === 'svc-config' ? node : undefined;
}

/**
 * Which credential is checked with which secret: one typed in the dialog, or the deployed node's
 * stored one while the settings it goes with are as deployed. No stored credential is read otherwise.
 */
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

interface Reply {
  ok: boolean;
  /** One line: "token ✓ · API key ✗ 401 · topics key not set". */
  message: string;
  /** The first check that did not pass, if any. */
  code: string | null;
  statusCode: number | null;
  checks: Array<{ credential: Credential; outcome: CheckResult['outcome']; code: string | null; statusCode: number | null; message: string }>;
}

function replyFor(results: CheckResult[]): Reply {
  const problem = results.find((r) => r.outcome === 'refused' || r.outcome === 'failed' || r.outcome === 'retype');
  return {
    ok: !problem && results.some((r) => r.outcome === 'accepted'),
    message: results.map((r) => translate(lineOf(r))).join(' · '),
    code: problem?.code ?? null,
    statusCode: problem?.statusCode ?? null,
    checks: results.map((r) => ({ credential: r.credential, outcome: r.outcome, code: r.code, statusCode: r.statusCode, message: translate(r.message) })),
  };
}

/** "API key ✗ 401": the credential's part of the one-line summary. */
function lineOf(result: CheckResult): CatalogText {
  return catalogText(`test.line.${result.outcome}`, {
    credential: catalogText(`test.name.${result.credential}`),
    status: result.statusCode === null ? (result.code ?? '') : String(result.statusCode),
  });
}

/** What the audit log keeps of a check: its outcome and status, never a secret or a text. */
function auditText(result: CheckResult): string {
  return [result.outcome, result.code, result.statusCode].filter((part) => part !== null).join(' ');
}
