import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Session } from 'node:inspector/promises';
import v8 from 'node:v8';
import type { LocalSettings } from '@node-red/runtime';
import express from 'express';
import * as undici from 'undici';
import { runChild, serve } from './rpc';
import { ProfileSummary, summarizeProfile } from './profile';
import { NODES_DIR, NODE_RED_DIR } from '../support/paths';
import { LEAST_NODE_TYPE } from './least-node';
import { localJobStore } from '../../nodes/lib/node-red/resumable';

/**
 * Node-RED embedded as an application embeds it (RED.init/RED.start with an express server), in its
 * own process, with this pack's nodes from `nodes/` and the admin API at /admin. Started with
 * --expose-gc so that heap figures are taken after a full collection.
 */

/** The dev dependency's Node-RED (4.1), or Node-RED 5 with NODE_RED_PATH (CONTRIBUTING, Benchmarks). */
const RED = require(NODE_RED_DIR) as typeof import('node-red');

/**
 * Puts the bench's least node (least-node.ts) in `userDir`'s `nodes` folder, where Node-RED looks for
 * nodes of a user's own: a file that loads the compiled node, and the editor file Node-RED requires
 * beside it (the editor is off).
 */
function addLeastNode(userDir: string): void {
  const dir = path.join(userDir, 'nodes');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, `${LEAST_NODE_TYPE}.js`), `module.exports = require(${JSON.stringify(path.join(__dirname, 'least-node.js'))}).register;\n`);
  const editor = `RED.nodes.registerType(${JSON.stringify(LEAST_NODE_TYPE)}, { category: 'function', defaults: {}, inputs: 1, outputs: 1 });`;
  fs.writeFileSync(path.join(dir, `${LEAST_NODE_TYPE}.html`), `<script type="text/javascript">${editor}</script>\n`);
}

const HOST = '127.0.0.1';
const ADMIN_ROOT = '/admin';
const MEMORY_SAMPLE_MS = 20;

export interface Snapshot {
  heapUsedBytes: number;
  rssBytes: number;
  /** Open resources of the process by kind (`TCPSocketWrap`, `Timeout`, …). */
  handles: Record<string, number>;
  /** Routes on RED.httpNode (one per `http in` or webhook node). */
  routes: number;
  /**
   * Open socket file descriptors, idle keep-alive ones included (which `handles` leaves out because
   * they do not keep the process alive); undefined where /proc/self/fd does not exist.
   */
  socketDescriptors: number | undefined;
}

export interface MemoryPeak {
  baselineRssBytes: number;
  peakRssBytes: number;
  baselineHeapBytes: number;
  peakHeapBytes: number;
}

type RouterLayer = { route?: unknown };

function collectGarbage(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('start Node-RED with --expose-gc');
  // Twice, with a turn of the event loop between: finalizers of the first pass free more in the second.
  gc();
  return new Promise((resolve) =>
    setImmediate(() => {
      gc();
      resolve();
    }),
  );
}

function openHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

function socketDescriptors(): number | undefined {
  const dir = '/proc/self/fd';
  if (!fs.existsSync(dir)) return undefined;
  let sockets = 0;
  for (const fd of fs.readdirSync(dir)) {
    try {
      if (fs.readlinkSync(path.join(dir, fd)).startsWith('socket:')) sockets++;
    } catch {
      // Closed between the listing and the look: not open any more.
    }
  }
  return sockets;
}

function routeCount(): number {
  const router = (RED.httpNode as unknown as { _router?: { stack: RouterLayer[] } })._router;
  return router ? router.stack.filter((layer) => layer.route !== undefined).length : 0;
}

function benchMethods(userDir: string) {
  let sampler: NodeJS.Timeout | undefined;
  let peak: MemoryPeak | undefined;
  // A deploy through the admin API responds before the new flows run: this count says when they do.
  let flowsStarted = 0;
  RED.events.on('flows:started', () => flowsStarted++);
  let profiler: Session | undefined;
  return {
    flowsStarted: () => flowsStarted,
    /** Heap after a full GC, open handles and routes. */
    snapshot: async (): Promise<Snapshot> => {
      await collectGarbage();
      const { heapUsed, rss } = process.memoryUsage();
      return { heapUsedBytes: heapUsed, rssBytes: rss, handles: openHandles(), routes: routeCount(), socketDescriptors: socketDescriptors() };
    },
    /** Writes a heap snapshot (for DevTools, or heap-diff.ts) to `file` after a full GC. */
    heapSnapshot: async (file: string): Promise<void> => {
      await collectGarbage();
      v8.writeHeapSnapshot(file);
    },
    /** Starts sampling RSS and heap (after a GC for the baseline) until `memoryPeak`. */
    watchMemory: async () => {
      await collectGarbage();
      const { rss, heapUsed } = process.memoryUsage();
      const current: MemoryPeak = { baselineRssBytes: rss, peakRssBytes: rss, baselineHeapBytes: heapUsed, peakHeapBytes: heapUsed };
      peak = current;
      clearInterval(sampler);
      sampler = setInterval(() => {
        const usage = process.memoryUsage();
        current.peakRssBytes = Math.max(current.peakRssBytes, usage.rss);
        current.peakHeapBytes = Math.max(current.peakHeapBytes, usage.heapUsed);
      }, MEMORY_SAMPLE_MS);
    },
    memoryPeak: (): MemoryPeak => {
      clearInterval(sampler);
      sampler = undefined;
      if (!peak) throw new Error('watchMemory was not called');
      return peak;
    },
    /** Writes made so far to the job store file of config node `serverId` (jobs.ts). */
    jobStoreWrites: (serverId: string) => localJobStore(userDir, serverId).writes,
    /** CPU time used by this process so far, microseconds. */
    cpu: () => process.cpuUsage(),
    /** Starts V8's sampling profiler in this process (the inspector, as `--cpu-prof` uses it). */
    startProfile: async () => {
      profiler = new Session();
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
      await profiler.post('Profiler.start');
    },
    /** Stops the profiler, writes the profile to `file` (for DevTools) and returns its summary. */
    stopProfile: async (file: string): Promise<ProfileSummary> => {
      if (!profiler) throw new Error('startProfile was not called');
      const { profile } = await profiler.post('Profiler.stop');
      profiler.disconnect();
      profiler = undefined;
      fs.writeFileSync(file, JSON.stringify(profile));
      return summarizeProfile(profile);
    },
  };
}

export type NodeRedMethods = ReturnType<typeof benchMethods>;

/**
 * Starts Node-RED and serves the bench's methods; gives what stops it and removes its user directory.
 * BENCH_USER_DIR names a user directory of the caller's instead (a restart: kept, its flows run again).
 */
async function main(): Promise<() => Promise<void>> {
  const given = process.env.BENCH_USER_DIR;
  const userDir = given ?? fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-node-red-'));
  if (!fs.existsSync(path.join(userDir, 'nodes'))) addLeastNode(userDir);
  const app = express();
  const server = http.createServer(app);
  const settings: LocalSettings & { telemetry: { enabled: boolean } } = {
    userDir,
    flowFile: 'flows.json',
    credentialSecret: false,
    uiHost: HOST,
    // Only shown in Node-RED's log: the server here is this process's own, on an ephemeral port.
    uiPort: 0,
    httpAdminRoot: ADMIN_ROOT,
    httpNodeRoot: '/',
    disableEditor: true,
    nodesDir: NODES_DIR,
    logging: { console: { level: 'warn', metrics: false, audit: false } },
    // No consent prompt, no update check: a measuring instance talks to nothing but loopback.
    telemetry: { enabled: false },
    // The in-process limit flow's function node makes its request with undici itself.
    functionGlobalContext: { undici },
  };
  RED.init(server, settings);
  app.use(ADMIN_ROOT, RED.httpAdmin);
  app.use('/', RED.httpNode);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => resolve());
  });
  const methods = benchMethods(userDir);
  // RED.start resolves before the flows stored at start-up are running; deploys are counted from then on.
  const initialFlows = new Promise((resolve) => RED.events.once('flows:started', resolve));
  await RED.start();
  await initialFlows;
  const port = (server.address() as AddressInfo).port;
  serve(methods, { url: `http://${HOST}:${port}`, adminUrl: `http://${HOST}:${port}${ADMIN_ROOT}` });
  return async () => {
    await RED.stop().catch(() => undefined);
    server.closeAllConnections();
    if (given === undefined) fs.rmSync(userDir, { recursive: true, force: true });
  };
}

if (require.main === module) runChild(main);
