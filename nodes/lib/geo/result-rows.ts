import type { InputRow } from '../format/address-rows';
import { isRecord, toNumber } from '../util/values';
import { CatalogText, catalogText } from '../util/catalog-text';
import { LatLon, checkLatLon } from './geohash';
import { bestFeature, featurePoint } from './geojson';

/** One output row of bulk geocoding, tied to its input row by `index`. */
export interface BulkRow {
  index: number;
  input: unknown;
  /** The result file's record for this row, as read (JSON, or CSV fields by column). */
  result: unknown;
  location: LatLon | undefined;
  error: string | undefined;
  /** `ROW_MISMATCH` when the result file echoes addresses and none of its rows echoes this one; absent otherwise. */
  code?: typeof ROW_MISMATCH;
}

/**
 * The code of a row that the result file, whose rows echo their addresses, has no row for: it gets
 * no record rather than another address's (see the bulk protocol's pairing).
 */
export const ROW_MISMATCH = 'ROW_MISMATCH';

/** An echo as a row's error quotes it: the start of it only, whatever the file holds. */
const ECHO_QUOTED_CHARS = 100;

/** A row as read, before the Node-RED glue translates its error: the service's own text, or ours as a catalog message. */
export interface RowOutcome extends Omit<BulkRow, 'error'> {
  error: string | CatalogText | undefined;
}

const ERROR_MEMBER = /^(?:error|errors|error_?message|error_?description|failure_?reason)$/i;
const LAT_MEMBER = /^(?:lat|latitude)$/i;
const LON_MEMBER = /^(?:lon|lng|long|longitude)$/i;

/** A row's output from its result record: the location in it, or why there is none. */
export function bulkRow(row: InputRow, record: unknown): RowOutcome {
  const base = { index: row.index, input: row.input };
  if (record === undefined) return { ...base, result: undefined, location: undefined, error: catalogText('error.bulk.noResultRow') };
  const location = featurePoint(bestFeature(record)) ?? latLonIn(record, 0);
  const error = errorIn(record) ?? (location ? undefined : catalogText('error.bulk.noLocationInRow'));
  return { ...base, result: record, location, error };
}

/** The output of a row that was not sent, with the reason. */
export function unsentRow(row: InputRow, reason: CatalogText): RowOutcome {
  return { index: row.index, input: row.input, result: undefined, location: undefined, error: reason };
}

/** The output of a row whose address no row of the result file echoes; `echoInPlace`: what the row at its position echoes instead. */
export function unmatchedRow(row: InputRow, echoInPlace: string | undefined): RowOutcome {
  const error =
    echoInPlace === undefined
      ? catalogText('error.bulk.rowUnmatched')
      : catalogText('error.bulk.rowUnmatchedInPlace', { echo: echoInPlace.slice(0, ECHO_QUOTED_CHARS) });
  return { index: row.index, input: row.input, result: undefined, location: undefined, error, code: ROW_MISMATCH };
}

/** A location from latitude and longitude members (CSV columns or JSON), a couple of levels deep. */
function latLonIn(value: unknown, depth: number): LatLon | undefined {
  if (!isRecord(value) || depth > 2) return undefined;
  const keys = Object.keys(value);
  const latKey = keys.find((key) => LAT_MEMBER.test(key));
  const lonKey = keys.find((key) => LON_MEMBER.test(key));
  if (latKey && lonKey && toNumber(value[latKey]) !== undefined && toNumber(value[lonKey]) !== undefined) {
    try {
      return checkLatLon(value[latKey], value[lonKey], catalogText('value.result'));
    } catch {
      return undefined;
    }
  }
  for (const member of Object.values(value)) {
    const found = latLonIn(member, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function errorIn(record: unknown): string | undefined {
  if (!isRecord(record)) return undefined;
  for (const [key, value] of Object.entries(record)) {
    if (!ERROR_MEMBER.test(key)) continue;
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    if (isRecord(value) && typeof value.message === 'string') return value.message;
  }
  return undefined;
}
