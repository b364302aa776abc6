import type { Profiler } from 'node:inspector';

/**
 * Where a CPU profile of the Node-RED process spends its time: self time by part (this pack's code,
 * Node-RED, undici, express, Node's own JavaScript, native code and GC) and the functions with the
 * most self time. Self time is the time a function was the one running, so the parts add up to 100 %.
 */

export interface ProfileShare {
  name: string;
  selfMs: number;
  /** Of all sampled time, idle excluded. */
  percent: number;
}

export interface ProfileSummary {
  /** Sampled time with the process busy (idle excluded). */
  busyMs: number;
  byPart: ProfileShare[];
  topFunctions: ProfileShare[];
}

/** The part of the process a script belongs to, by its path. */
export function partOf(url: string, functionName: string): string {
  if (url === '') {
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (functionName === '(idle)') return 'idle';
    return 'native (V8 builtins, C++ bindings)';
  }
  if (url.startsWith('node:')) return 'Node.js core (http, streams, timers, events)';
  if (/[\\/]node_modules[\\/]undici[\\/]/.test(url)) return 'undici (outgoing HTTP)';
  if (/[\\/]node_modules[\\/](@node-red|node-red)[\\/]/.test(url)) return 'Node-RED runtime';
  if (/[\\/]node_modules[\\/](express|body-parser|router|on-finished|raw-body|cookie-parser|cors|type-is|mime|qs|send|finalhandler)[\\/]/.test(url))
    return 'express and its middleware (http in/out)';
  if (/[\\/]node_modules[\\/]/.test(url)) return 'other modules';
  if (/[\\/]dist[\\/]nodes[\\/]/.test(url)) return 'this pack (dist/nodes)';
  return 'other';
}

export function summarizeProfile(profile: Profiler.Profile, top = 15): ProfileSummary {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // A sample's time is the delta to the next sample (the last one gets none).
  for (let i = 0; i < samples.length - 1; i++) selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + (deltas[i + 1] ?? 0));
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const frame = nodes.get(id)?.callFrame;
    if (!frame) continue;
    const part = partOf(frame.url, frame.functionName);
    if (part === 'idle') continue;
    busyUs += us;
    parts.set(part, (parts.get(part) ?? 0) + us);
    const file = frame.url.replace(/^.*[\\/](node_modules|dist)[\\/]/, '$1/');
    const name = `${frame.functionName || '(anonymous)'} ${file}${file ? `:${frame.lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
  }
  const shares = (entries: Map<string, number>) =>
    [...entries].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, selfMs: us / 1000, percent: busyUs === 0 ? 0 : (100 * us) / busyUs }));
  return { busyMs: busyUs / 1000, byPart: shares(parts), topFunctions: shares(functions).slice(0, top) };
}
