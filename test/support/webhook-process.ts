import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { NodeRedProcess, runtimeUnderTest } from './node-red-process';
import { NODES_DIR } from './paths';
import { Collector } from './process-flows';
import { waitUntil } from './wait';
import { signatureHeader } from '../bench/webhook-signing';
import { WebSocket } from 'undici';

/**
 * A real Node-RED process for svc-webhook-in's HTTP cases: Node-RED 4.1 under `npm test`, and the
 * Node-RED that NODE_RED_PATH names (5, on the Node running the suite) under `npm run test:nr5`.
 * The pack's built nodes come from dist/nodes (nodesDir); flows are deployed through the admin API,
 * with a token when adminAuth is on; every output and status of the flow reaches a collector.
 */

export type Fields = Record<string, unknown>;

/** The user `admin`, password `password` (the hash in Node-RED's settings.js template), with every permission. */
export const ADMIN_AUTH = {
  type: 'credentials',
  users: [{ username: 'admin', password: '$2a$08$zZWtXTja0fB1pzD4sHCMyOCMYz2Z6dNbM6tl8sJogENOMcxWV9DN.', permissions: '*' }],
};

export interface RigSettings {
  httpAdminRoot?: string;
  httpNodeRoot?: string;
  adminAuth?: Fields;
  /** The pack's own settings.js option (docs/operations.md). */
  svcLocation?: Fields;
  /** Entries a webhook path's replay record holds at most (the pack's setting). */
  svcWebhookReplayCap?: number;
}

/** One Node-RED on a user directory of its own, restartable on the same directory (flows, credentials, files kept). */
export class WebhookRig {
  readonly collector = new Collector();
  nodeRed!: NodeRedProcess;
  private token: string | undefined;
  private readonly workDir: string;
  readonly userDir: string;

  constructor(
    private readonly settings: RigSettings,
    private readonly runtime = runtimeUnderTest(),
  ) {
    this.workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-webhook-'));
    this.userDir = path.join(this.workDir, 'node-red');
    fs.mkdirSync(this.userDir);
    const settingsJs = {
      flowFile: 'flows.json',
      uiHost: '127.0.0.1',
      credentialSecret: 'webhook-suite',
      nodesDir: NODES_DIR,
      telemetry: { enabled: false },
      editorTheme: { tours: false, palette: { catalogues: [] } },
      logging: { console: { level: 'info', metrics: false, audit: false } },
      ...settings,
    };
    fs.writeFileSync(path.join(this.userDir, 'settings.js'), `module.exports = ${JSON.stringify(settingsJs, null, 2)};\n`);
  }

  get adminRoot(): string {
    return (this.settings.httpAdminRoot ?? '/').replace(/\/?$/, '/');
  }

  async start(): Promise<void> {
    if (!this.collector.url) await this.collector.start();
    this.nodeRed = await NodeRedProcess.start(this.userDir, this.runtime, 90_000);
    this.token = undefined;
  }

  /** SIGKILL, then the same Node-RED again on the same user directory. */
  async killAndRestart(): Promise<void> {
    await this.nodeRed.kill();
    await this.start();
  }

  async stop(): Promise<void> {
    await this.nodeRed?.stop(10_000);
    await this.collector.close();
    fs.rmSync(this.workDir, { recursive: true, force: true });
  }

  /** Logs in as the editor does (adminAuth `credentials`): the response's status and token. */
  async login(): Promise<{ status: number; token?: string }> {
    const res = await this.nodeRed.request(`${this.adminRoot}auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: 'node-red-admin', grant_type: 'password', scope: '*', username: 'admin', password: 'password' }),
    });
    const body = (await res.json().catch(() => ({}))) as { access_token?: string };
    return { status: res.status, token: body.access_token };
  }

  /** The admin API's authorization header (none without adminAuth). */
  async authorization(): Promise<{ authorization: string } | Record<string, never>> {
    if (!this.settings.adminAuth) return {};
    if (!this.token) {
      const { status, token } = await this.login();
      if (status !== 200 || !token) throw new Error(`login responded with ${status}`);
      this.token = token;
    }
    return { authorization: `Bearer ${this.token}` };
  }

  /** A full deployment through the admin API: its status; waits for the flows to start when it succeeds. */
  async deploy(flows: Fields[]): Promise<number> {
    const started = this.startedCount();
    const res = await this.nodeRed.request(`${this.adminRoot}flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full', 'node-red-api-version': 'v1', ...(await this.authorization()) },
      body: JSON.stringify(flows),
    });
    await res.arrayBuffer();
    if (res.status < 300) await waitUntil(() => this.startedCount() > started, 'the deployed flows to start', 30_000);
    return res.status;
  }

  /** Log lines since `from` (an index into the log). */
  logSince(from: number): string[] {
    return this.nodeRed.log.slice(from);
  }

  private startedCount(): number {
    return this.nodeRed.log.filter((line) => line.includes('Started flows')).length;
  }

  /** Reports (outputs and statuses) that satisfy `match`, once at least `count` have arrived. */
  async reports(match: (report: Fields) => boolean, count = 1, timeoutMs = 10_000): Promise<Fields[]> {
    await waitUntil(() => this.collector.reports.filter(match).length >= count, `${count} matching report(s)`, timeoutMs);
    return this.collector.reports.filter(match);
  }

  /**
   * The status a node shows now, as the editor gets it: Node-RED keeps each node's last status and
   * sends it to every client that subscribes to `status/#` on its comms websocket.
   */
  async statusOf(id: string, timeoutMs = 10_000): Promise<{ fill?: string; text?: string }> {
    const auth = this.settings.adminAuth ? await this.authorization() : undefined;
    const socket = new WebSocket(`ws://127.0.0.1:${this.nodeRed.port}${this.adminRoot}comms`);
    try {
      return await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no status of ${id} within ${timeoutMs} ms`)), timeoutMs);
        const subscribe = () => socket.send(JSON.stringify({ subscribe: 'status/#' }));
        socket.onopen = () => (auth ? socket.send(JSON.stringify({ auth: auth.authorization.slice('Bearer '.length) })) : subscribe());
        socket.onerror = () => reject(new Error('the comms websocket failed'));
        socket.onmessage = (event) => {
          const data = JSON.parse(String(event.data)) as unknown;
          for (const item of (Array.isArray(data) ? data : [data]) as Array<{ auth?: string; topic?: string; data?: Fields }>) {
            if (item.auth === 'ok') subscribe();
            if (item.topic === `status/${id}`) {
              clearTimeout(timer);
              resolve(item.data as { fill?: string; text?: string });
            }
          }
        };
      });
    } finally {
      socket.close();
    }
  }

  /** Messages the webhook with this id sent. */
  messagesOf(id: string): Fields[] {
    return this.collector.reports.filter((r) => r.kind === 'message' && r.source === id);
  }
}

/**
 * A tab holding the given nodes and a reporter: each output of a node wired to `<tab>-report`
 * reaches the collector as `{kind: 'message', source, payload, webhook}`.
 */
export function reportingTab(tab: { id: string; label: string }, collectorUrl: string, nodes: Fields[]): Fields[] {
  const placed = (node: Fields, index: number): Fields => ({ x: 120 + 20 * index, y: 80 + 40 * index, z: tab.id, ...node });
  const report = `${tab.id}-report`;
  return [
    { id: tab.id, type: 'tab', label: tab.label },
    ...nodes.map((node) => ({ wires: [[report]], ...node })),
    {
      id: report,
      type: 'function',
      func: [
        "msg.payload = { kind: 'message', source: msg._source, payload: msg.payload, webhook: msg.webhook };",
        "msg.headers = { 'content-type': 'application/json' };",
        'return msg;',
      ].join('\n'),
      outputs: 1,
      wires: [[`${tab.id}-post`]],
    },
    { id: `${tab.id}-post`, type: 'http request', method: 'POST', ret: 'txt', url: collectorUrl, wires: [] },
  ].map(placed);
}

/** A webhook node that tags its messages with its id (a change node sets msg._source) before the reporter. */
export function webhookNodes(tabId: string, node: Fields): Fields[] {
  const tag = `${String(node.id)}-tag`;
  return [
    { type: 'svc-webhook-in', verify: 'signature', tolerance: 300, maxBodyKb: 64, headerName: '', server: '', ...node, wires: [[tag]] },
    {
      id: tag,
      type: 'change',
      rules: [{ t: 'set', p: '_source', pt: 'msg', to: String(node.id), tot: 'str' }],
      wires: [[`${tabId}-report`]],
    },
  ];
}

/** The exact bytes of an HTTP/1.1 request (send `connection: close`) over a plain socket, and the status line's code (0 when the server hung up). */
export async function rawRequest(port: number, head: string, body: Buffer, timeoutMs = 10_000): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      // Not ended: Node's server drops a request it is still responding to once the client half-closes.
      socket.write(Buffer.concat([Buffer.from(head.replace(/\n/g, '\r\n')), body]));
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
    socket.setTimeout(timeoutMs, () => socket.destroy());
  });
}

/** A signed POST of exactly these bytes; the status and the body of the response. */
export async function postSigned(
  nodeRed: NodeRedProcess,
  urlPath: string,
  body: Buffer | string,
  secret: string,
  t = String(Math.floor(Date.now() / 1000)),
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const bytes = Buffer.from(body);
  const res = await nodeRed.request(urlPath, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'svc-signature': signatureHeader(t, secret, bytes), ...headers },
    body: new Uint8Array(bytes),
  });
  return { status: res.status, text: await res.text() };
}
