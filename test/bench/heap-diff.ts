import fs from 'node:fs';

/**
 * `node dist/test/bench/heap-diff.js before.heapsnapshot after.heapsnapshot [per]`: what a heap
 * holds more in the second V8 snapshot than in the first, by kind of object (its constructor or, for
 * closures, its function name) with the count and the bytes of the objects themselves (shallow),
 * largest first; with `per` (a count of jobs, say), also per one of them.
 */

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

type Counts = Map<string, { count: number; bytes: number }>;

function kinds(file: string): Counts {
  const heap = JSON.parse(fs.readFileSync(file, 'utf8')) as HeapSnapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field));
  const counts: Counts = new Map();
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    const type = types[heap.nodes[i + typeAt]];
    const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : heap.strings[heap.nodes[i + nameAt]];
    const kind = `${type}:${name.slice(0, 60)}`;
    const entry = counts.get(kind) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += heap.nodes[i + sizeAt];
    counts.set(kind, entry);
  }
  return counts;
}

function main(): void {
  const [beforeFile, afterFile, perText] = process.argv.slice(2);
  if (!beforeFile || !afterFile) throw new Error('usage: heap-diff.js before.heapsnapshot after.heapsnapshot [per]');
  const per = Number(perText ?? 1);
  const before = kinds(beforeFile);
  const after = kinds(afterFile);
  const rows = [...after].map(([kind, { count, bytes }]) => ({
    kind,
    count: count - (before.get(kind)?.count ?? 0),
    bytes: bytes - (before.get(kind)?.bytes ?? 0),
  }));
  rows.sort((a, b) => b.bytes - a.bytes);
  const total = rows.reduce((sum, row) => sum + row.bytes, 0);
  console.log(`total ${total} bytes more${per !== 1 ? `, ${(total / per).toFixed(0)} per one of ${per}` : ''}`);
  for (const row of rows.slice(0, 40)) {
    console.log(`${String(row.bytes).padStart(10)} ${(row.bytes / per).toFixed(0).padStart(7)} B ${(row.count / per).toFixed(2).padStart(7)} × ${row.kind}`);
  }
}

main();
