import os from 'node:os';
import { request } from 'undici';
import type { FlowNode } from './flows';
import type { LoadgenMethods, LoadResult, LoadSpec } from './loadgen';
import type { NodeRedMethods } from './nodered-process';
import { Child } from './rpc';
import type { SandboxMethods } from './sandbox-process';

/** The three processes of a benchmark run and the calls every section makes. */
export class Bench {
  constructor(
    readonly sandbox: Child<SandboxMethods, { url: string }>,
    readonly nodeRed: Child<NodeRedMethods, { url: string; adminUrl: string }>,
    readonly loadgen: Child<LoadgenMethods>,
    /** Node types Node-RED has loaded (teammates' nodes may not be there yet). */
    readonly available: Set<string>,
    /** Shortened runs for trying the benchmark out (BENCH_QUICK=1); the figures are not the issue's. */
    readonly quick: boolean,
    /** Where a process started by a section writes its log. */
    readonly logFile: (name: string) => string,
  ) {}

  get sandboxUrl(): string {
    return this.sandbox.info.url;
  }

  get nodeRedUrl(): string {
    return this.nodeRed.info.url;
  }

  /**
   * A deployment through the admin API, as the editor's Deploy button does: "full" by default, or
   * "flows", which restarts only the flows that changed.
   */
  deploy(flows: FlowNode[], type: DeploymentType = 'full'): Promise<void> {
    return deployTo(this.nodeRed, flows, type);
  }

  /** One request to Node-RED, with no time limit: a bulk run takes minutes. */
  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const res = await request(`${this.nodeRedUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the text is the response.
    }
    return { status: res.statusCode, body: parsed };
  }

  load(spec: LoadSpec): Promise<LoadResult> {
    return this.loadgen.call('run', spec);
  }

  /** The 1, 5 and 15 minute load averages of the machine, so that figures can be read against them. */
  loadAverage(): number[] {
    return os.loadavg().map((value) => Math.round(value * 100) / 100);
  }
}

/** What a deployment restarts: every flow, or only the flows that changed. */
export type DeploymentType = 'full' | 'flows';

/** A deployment to one embedded Node-RED; resolves once the deployed flows run. */
export async function deployTo(
  nodeRed: Child<NodeRedMethods, { url: string; adminUrl: string }>,
  flows: FlowNode[],
  type: DeploymentType = 'full',
): Promise<void> {
  const started = await nodeRed.call('flowsStarted', undefined);
  const res = await request(`${nodeRed.info.adminUrl}/flows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'node-red-deployment-type': type, 'node-red-api-version': 'v1' },
    body: JSON.stringify(flows),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`deploy responded with ${res.statusCode}: ${text}`);
  await waitFor('the deployed flows to start', async () => ((await nodeRed.call('flowsStarted', undefined)) > started ? true : undefined), 30_000, 5);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until `check` returns a value, polling; throws after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}
