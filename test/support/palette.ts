import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CommsRecorder } from './comms';
import { flowsStarted, ModuleInfo, NodeRedProcess, NodeRedRuntime } from './node-red-process';

/**
 * Node-RED's editor as a palette user drives it, through the admin API calls its own code makes
 * (@node-red/editor-client's red.js): log in (`POST auth/token`), Manage palette (`POST nodes`),
 * Import > Examples (`GET library/examples/flows/…`), Deploy (`POST flows`), an inject node's button
 * (`POST inject/:id`), and the debug sidebar and node statuses (the comms websocket).
 */

/** A flow file's node, as exported and imported. */
export type FlowNode = Record<string, unknown> & { id: string; type: string; z?: string; wires?: string[][] };

/** The user of a Node-RED with adminAuth: a password, stored as the bcrypt hash `node-red admin hash-pw` prints. */
export const ADMIN = {
  username: 'admin',
  password: 'examples-admin-password',
  hash: '$2b$08$Y32TStIvG9Gi3lZWx34kJOfLoASDJfmzhvBvJg75Y3PxNXDfgsOdK',
};

/**
 * The runtime's own settings.js in `userDir` (what Node-RED writes there on a first start), with
 * `adminAuth` on for ADMIN when asked, as a user edits it.
 */
export function writeSettings(userDir: string, runtime: NodeRedRuntime, adminAuth: boolean): void {
  const settings = fs.readFileSync(path.join(path.dirname(runtime.redJs), 'settings.js'), 'utf8');
  const users = [{ username: ADMIN.username, password: ADMIN.hash, permissions: '*' }];
  const auth = adminAuth ? `\nmodule.exports.adminAuth = ${JSON.stringify({ type: 'credentials', users })};\n` : '';
  fs.writeFileSync(path.join(userDir, 'settings.js'), settings + auth);
}

/** The editor of one Node-RED, logged in when it has adminAuth. */
export class Editor {
  private constructor(
    readonly nodeRed: NodeRedProcess,
    readonly token: string | undefined,
  ) {}

  /** Opens the editor: with adminAuth (GET auth/login offers credentials), logs in as ADMIN as the login dialog does. */
  static async open(nodeRed: NodeRedProcess): Promise<Editor> {
    const login = await nodeRed.get<{ type?: string }>('/auth/login');
    if (login.type === undefined) return new Editor(nodeRed, undefined);
    if (login.type !== 'credentials') throw new Error(`the editor asks for a login of type ${login.type}`);
    const body = new URLSearchParams({ client_id: 'node-red-editor', grant_type: 'password', scope: '', username: ADMIN.username, password: ADMIN.password });
    const response = await nodeRed.request('/auth/token', { method: 'POST', body });
    if (response.status !== 200) throw new Error(`POST /auth/token responded with ${response.status}: ${await response.text()}`);
    return new Editor(nodeRed, ((await response.json()) as { access_token: string }).access_token);
  }

  /** The headers the editor adds to each of its admin API calls. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), 'node-red-api-version': 'v2', ...extra };
  }

  async call<T>(method: 'GET' | 'POST', urlPath: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 30_000): Promise<T> {
    const init: RequestInit = { method, headers: this.headers({ accept: 'application/json', ...headers }) };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json; charset=utf-8';
    }
    const response = await this.nodeRed.request(urlPath, init, timeoutMs);
    const text = await response.text();
    if (response.status !== 200 && response.status !== 204) throw new Error(`${method} ${urlPath} responded with ${response.status}: ${text}`);
    return (/json/.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text) as T;
  }

  /** Manage palette > Install > Upload module. */
  upload(tarball: string): Promise<ModuleInfo> {
    return this.nodeRed.upload(tarball, 180_000, this.headers());
  }

  /** Manage palette > Install: a module by name and version, from the npm cache or registry. */
  install(module: string, version: string): Promise<ModuleInfo> {
    return this.call<ModuleInfo>('POST', '/nodes', { module, version }, {}, 180_000);
  }

  /**
   * Import > Examples: the library's tree (`library/examples/flows/`, then the module's folder), then
   * each file as the Import button fetches it, parsed as the import parses it; by file name.
   */
  async examples(module: string): Promise<Map<string, FlowNode[]>> {
    const root = '/library/examples/flows/';
    const modules = await this.call<unknown[]>('GET', root);
    if (!modules.includes(module)) throw new Error(`Import > Examples does not list ${module}: ${JSON.stringify(modules)}`);
    const files = (await this.call<Array<string | { fn: string }>>('GET', `${root}${module}/`)).flatMap((entry) =>
      typeof entry === 'string' ? [] : [entry.fn],
    );
    const flows = new Map<string, FlowNode[]>();
    for (const fn of files.sort()) {
      const text = await this.call<unknown>('GET', `${root}${module}/${fn}`);
      flows.set(fn, (typeof text === 'string' ? JSON.parse(text) : text) as FlowNode[]);
    }
    return flows;
  }

  /** What the editor loads: the deployed flows and their revision. */
  flows(): Promise<{ flows: FlowNode[]; rev: string }> {
    return this.call('GET', '/flows');
  }

  /**
   * Deploy (full), with the revision the editor loaded; resolves once the runtime logs that the flows
   * started (the response may come first, and an inject button is not found until then).
   */
  async deploy(flows: FlowNode[], rev: string, timeoutMs = 60_000): Promise<void> {
    const startedBefore = this.nodeRed.log.filter(flowsStarted).length;
    await this.call('POST', '/flows', { flows, rev }, { 'node-red-deployment-type': 'full' });
    const deadline = Date.now() + timeoutMs;
    while (this.nodeRed.log.filter(flowsStarted).length === startedBefore) {
      if (Date.now() > deadline) throw new Error(`the flows did not start within ${timeoutMs} ms of the deploy:\n${this.nodeRed.log.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** An inject node's button. */
  async click(injectId: string): Promise<void> {
    await this.call('POST', `/inject/${injectId}`);
  }

  /** The debug sidebar and node statuses, over the editor's comms websocket. */
  async sidebar(): Promise<Sidebar> {
    return new Sidebar(await CommsRecorder.open(this.nodeRed.port, '/', 10_000, this.token));
  }
}

/** The editor's RED.nodes.id(): eight random bytes in hex. */
const newId = () => crypto.randomBytes(8).toString('hex');

/** A workspace after an import, and the id each imported node of the example got. */
export interface Imported {
  workspace: FlowNode[];
  ids: Map<string, string>;
}

/**
 * Import > Examples > a flow, "Import to: new flow": a new tab holding every node with a position,
 * config nodes global. When an imported id is in the workspace already (the shared config node, from
 * the second example on), the editor asks, and the user chooses Import copy as README says: every node
 * gets a new id, and an existing global config node of the same id is used instead of a copy (the
 * editor's importNodes with generateIds). Node references are remapped as the editor does: wires, and
 * the properties whose editor default has a node type, here the Catch node's scope.
 */
export function importIntoNewFlow(workspace: FlowNode[], example: FlowNode[], label: string): Imported {
  const existing = new Set(workspace.map((node) => node.id));
  const copy = example.some((node) => existing.has(node.id));
  const reused = (node: FlowNode) => copy && existing.has(node.id) && !('x' in node);
  const ids = new Map(example.map((node) => [node.id, copy && !reused(node) ? newId() : node.id]));
  const remap = (id: string) => ids.get(id) ?? id;
  const tab: FlowNode = { id: newId(), type: 'tab', label, disabled: false, info: '', env: [] };
  const added = example
    .filter((node) => !reused(node))
    .map((node): FlowNode => {
      const imported: FlowNode = { ...node, id: remap(node.id) };
      if ('x' in node) imported.z = tab.id;
      if (node.wires) imported.wires = node.wires.map((port) => port.map(remap));
      if (Array.isArray(node.scope)) imported.scope = (node.scope as string[]).map(remap);
      return imported;
    });
  return { workspace: [...workspace, tab, ...added], ids };
}

/** One message of the debug sidebar: from a debug node (`id`), or a node's logged warning or error (`level`). */
export interface DebugMessage {
  id?: string;
  level?: number;
  format?: string;
  msg?: unknown;
}

/** The debug sidebar and node statuses; messages at each debug node are read in order. */
export class Sidebar {
  private read = 0;
  /** Where the current click's messages start. */
  private since = 0;
  private readonly debug: DebugMessage[] = [];
  private readonly taken = new Set<DebugMessage>();
  /** The latest status of each node. */
  private readonly statuses = new Map<string, { text?: string; fill?: string }>();

  constructor(private readonly comms: CommsRecorder) {}

  private update(): void {
    for (const frame of this.comms.frames.slice(this.read)) {
      const parsed = JSON.parse(frame) as unknown;
      for (const { topic, data } of (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ topic?: string; data: unknown }>) {
        if (topic === 'debug') this.debug.push(data as DebugMessage);
        else if (topic?.startsWith('status/')) this.statuses.set(topic.slice('status/'.length), data as { text?: string; fill?: string });
      }
    }
    this.read = this.comms.frames.length;
  }

  /** Marks the start of a click: next() reads only what comes after. */
  clicking(): void {
    this.update();
    this.since = this.debug.length;
  }

  /**
   * The next message shown by debug node `id` since the click that no one has taken yet, waiting up to
   * `timeoutMs`; throws at once if a message since the click is one `fails` (an error) shows.
   */
  async next(id: string, timeoutMs: number, fails: (message: DebugMessage) => boolean = () => false): Promise<DebugMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.update();
      const since = this.debug.slice(this.since).filter((message) => !this.taken.has(message));
      const found = since.find((message) => message.id === id && message.level === undefined);
      if (found) {
        this.taken.add(found);
        return found;
      }
      const failure = since.find(fails);
      if (failure) throw new Error(`instead: ${JSON.stringify(failure).slice(0, 400)}`);
      if (Date.now() > deadline) throw new Error(`debug node ${id} showed nothing within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The messages so far that no next() took and `filter` keeps. */
  untaken(filter: (message: DebugMessage) => boolean): DebugMessage[] {
    this.update();
    return this.debug.filter((message) => !this.taken.has(message) && filter(message));
  }

  /** The latest status node `id` showed. */
  status(id: string): { text?: string; fill?: string } | undefined {
    this.update();
    return this.statuses.get(id);
  }

  close(): void {
    this.comms.close();
  }
}

/**
 * The value a debug message shows, decoded as the sidebar decodes it (@node-red/util encodeObject):
 * objects and arrays as JSON, an error as its name, message and code, numbers and booleans from text.
 */
export function shownValue(message: DebugMessage): unknown {
  const { format = '', msg } = message;
  if (typeof msg !== 'string') return msg;
  if (format === 'error') return (JSON.parse(msg) as { data: unknown }).data;
  if (/^(Object|array|set|map)\b/.test(format) || format.startsWith('array[')) return JSON.parse(msg);
  if (format === 'number') return Number(msg);
  if (format === 'boolean') return msg === 'true';
  if (format === 'null') return null;
  if (format === 'undefined') return undefined;
  return msg;
}

/** The processes `pid` started that still run (its children, theirs, …), from /proc. */
export function descendants(pid: number): number[] {
  const children = (parent: number): number[] =>
    fs
      .readdirSync(`/proc/${parent}/task`)
      .flatMap((task) => fs.readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  const found: number[] = [];
  for (let queue = children(pid); queue.length > 0;) {
    const next = queue.shift() as number;
    found.push(next);
    try {
      queue = [...queue, ...children(next)];
    } catch {
      // It exited meanwhile.
    }
  }
  return found;
}

/** The TCP ports process `pid` listens on (its sockets in /proc/net/tcp and tcp6 in state LISTEN). */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set(
    fs
      .readdirSync(`/proc/${pid}/fd`)
      .map((fd) => {
        try {
          return /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        } catch {
          return undefined;
        }
      })
      .filter((inode): inode is string => inode !== undefined),
  );
  const ports = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) =>
    fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      // local_address is hex ip:port; state 0A is LISTEN; the inode is the tenth column.
      .filter((cols) => cols[3] === '0A' && inodes.has(cols[9]))
      .map((cols) => parseInt(cols[1].split(':')[1], 16)),
  );
  return [...new Set(ports)].sort((a, b) => a - b);
}
