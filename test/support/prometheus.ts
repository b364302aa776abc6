/**
 * A strict reader of the Prometheus text exposition format 0.0.4, for the metrics tests: every line is
 * a HELP, a TYPE or a sample; metric and label names follow the naming rules; label values use only the
 * three escapes; each metric's HELP and TYPE come once, before its samples, and its samples are
 * together; a histogram has cumulative `_bucket` samples ending at `le="+Inf"`, equal to its `_count`.
 * Anything else throws, naming the line.
 */

export interface Sample {
  /** The sample's own name (with `_bucket`, `_sum`, `_count` for a histogram). */
  name: string;
  /** The metric family it belongs to. */
  family: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parseExposition(text: string): Exposition {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the text does not end with a line feed');
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  const finished = new Set<string>();
  let current: string | undefined;
  const enter = (family: string, line: string) => {
    if (family === current) return;
    if (finished.has(family)) throw new Error(`samples of ${family} are not together: ${line}`);
    if (current !== undefined) finished.add(current);
    current = family;
  };
  for (const line of text.split('\n').slice(0, -1)) {
    if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) {
      const [, kind, name, ...rest] = line.split(' ');
      if (!METRIC_NAME.test(name)) throw new Error(`bad metric name: ${line}`);
      const map = kind === 'HELP' ? help : types;
      if (map.has(name)) throw new Error(`second ${kind} of ${name}: ${line}`);
      if (samples.some((s) => s.family === name)) throw new Error(`${kind} after samples of ${name}: ${line}`);
      if (kind === 'TYPE' && !TYPES.has(rest.join(' '))) throw new Error(`bad type: ${line}`);
      map.set(name, rest.join(' '));
      enter(name, line);
      continue;
    }
    if (line.startsWith('#') || line.trim() === '') throw new Error(`unexpected line: ${JSON.stringify(line)}`);
    const sample = parseSample(line);
    sample.family = familyOf(sample.name, types);
    enter(sample.family, line);
    samples.push(sample);
  }
  checkHistograms(types, samples);
  return { types, help, samples };
}

function familyOf(name: string, types: Map<string, string>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && types.get(base) === 'histogram') return base;
  }
  if (types.get(name) === 'histogram') throw new Error(`a histogram sample without its suffix: ${name}`);
  return name;
}

function parseSample(line: string): Sample {
  let i = 0;
  while (i < line.length && line[i] !== '{' && line[i] !== ' ') i++;
  const name = line.slice(0, i);
  if (!METRIC_NAME.test(name)) throw new Error(`bad metric name: ${line}`);
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    while (line[i] !== '}') {
      const eq = line.indexOf('=', i);
      if (eq < 0) throw new Error(`bad labels: ${line}`);
      const label = line.slice(i, eq);
      if (!LABEL_NAME.test(label) || label in labels) throw new Error(`bad or repeated label name ${JSON.stringify(label)}: ${line}`);
      if (line[eq + 1] !== '"') throw new Error(`unquoted label value: ${line}`);
      let value = '';
      let j = eq + 2;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] !== '\\') {
          value += line[j];
          continue;
        }
        const escaped = line[++j];
        if (escaped === 'n') value += '\n';
        else if (escaped === '\\' || escaped === '"') value += escaped;
        else throw new Error(`bad escape \\${escaped}: ${line}`);
      }
      if (j >= line.length) throw new Error(`unterminated label value: ${line}`);
      labels[label] = value;
      i = j + 1;
      if (line[i] === ',') i++;
      else if (line[i] !== '}') throw new Error(`bad label separator: ${line}`);
    }
    i++;
  }
  if (line[i] !== ' ') throw new Error(`no space before the value: ${line}`);
  const parts = line.slice(i + 1).split(' ');
  if (parts.length > 2) throw new Error(`too many fields: ${line}`);
  const value = parseValue(parts[0], line);
  if (parts.length === 2 && !/^-?\d+$/.test(parts[1])) throw new Error(`bad timestamp: ${line}`);
  return { name, family: name, labels, value };
}

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value: ${line}`);
  return Number(text);
}

function checkHistograms(types: Map<string, string>, samples: Sample[]): void {
  for (const [family, type] of types) {
    if (type !== 'histogram') continue;
    const series = new Map<string, Sample[]>();
    for (const sample of samples.filter((s) => s.family === family)) {
      const { le, ...rest } = sample.labels;
      if (sample.name.endsWith('_bucket') && le === undefined) throw new Error(`a bucket without le: ${family}`);
      const key = JSON.stringify(rest);
      series.set(key, [...(series.get(key) ?? []), sample]);
    }
    for (const [key, group] of series) {
      const buckets = group.filter((s) => s.name.endsWith('_bucket'));
      const count = group.find((s) => s.name.endsWith('_count'));
      if (!group.some((s) => s.name.endsWith('_sum')) || !count) throw new Error(`${family}${key} lacks _sum or _count`);
      if (buckets.at(-1)?.labels.le !== '+Inf') throw new Error(`${family}${key} does not end at le="+Inf"`);
      let previous = -Infinity;
      let previousValue = 0;
      for (const bucket of buckets) {
        const bound = parseValue(bucket.labels.le, bucket.labels.le);
        if (bound <= previous || bucket.value < previousValue) throw new Error(`${family}${key}: buckets not cumulative in order`);
        previous = bound;
        previousValue = bucket.value;
      }
      if (previousValue !== count.value) throw new Error(`${family}${key}: +Inf bucket ${previousValue} and _count ${count.value} differ`);
    }
  }
}

/** The value of the one sample named `name` whose labels include `labels` (undefined when none; throws when several). */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = exposition.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
