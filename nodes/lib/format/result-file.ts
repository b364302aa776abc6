import { parseCsv, recordToObject } from './csv';
import { isRecord } from '../util/values';
import { PlatformError } from '../util/errors';
import { catalogText } from '../util/catalog-text';

/** Members that may hold the list of results in a JSON result file, tried first. */
const RESULT_LIST_MEMBERS = ['results', 'items', 'rows', 'records', 'data', 'features', 'payload'];
const RECORD_SEPARATOR = '\u001e';

/**
 * The records of a result file: JSON (an array, a FeatureCollection, or an object holding a list),
 * JSON lines, or CSV with a header row; chosen by content type, else by the first character.
 * Throws an error saying what is wrong (a BAD_RESPONSE, a CsvError or JSON's own); the caller names the file.
 */
export function resultRecords(contentType: string, body: Buffer): unknown[] {
  const type = contentType.toLowerCase();
  const text = body.toString('utf8').replace(/^\uFEFF/, '');
  if (/ndjson|jsonl|jsonlines|json-seq/.test(type)) {
    return (
      text
        .split(/\r?\n/)
        // JSON text sequences (RFC 7464) start each record with the record separator.
        .map((line) => (line.startsWith(RECORD_SEPARATOR) ? line.slice(1) : line).trim())
        .filter((line) => line !== '')
        .map((line): unknown => JSON.parse(line))
    );
  }
  if (/json/.test(type) || (!/csv|text\//.test(type) && /^\s*[[{]/.test(text))) {
    const list = resultList(JSON.parse(text), 0);
    if (!list) throw new PlatformError('BAD_RESPONSE', catalogText('error.bulk.noResultList'));
    return list;
  }
  const [header = [], ...records] = parseCsv(text);
  const columns = header.map((name) => name.trim());
  return records.map((record) => recordToObject(columns, record));
}

function resultList(value: unknown, depth: number): unknown[] | undefined {
  if (Array.isArray(value)) return depth === 0 || value.every(isRecord) ? value : undefined;
  if (!isRecord(value) || depth > 2) return undefined;
  const keys = [...RESULT_LIST_MEMBERS.filter((key) => key in value), ...Object.keys(value)];
  for (const key of keys) {
    const list = resultList(value[key], depth + 1);
    if (list) return list;
  }
  return undefined;
}
