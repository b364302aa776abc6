import { InputError } from '../util/errors';
import { Label, catalogText } from '../util/catalog-text';

/** Dates and times for the routing endpoints (the sequence's `departure`, the route's `arriveBy` and `departAt`), checked against the calendar. */

export type DepartureFormat = 'local' | 'zoned';

const ZONELESS_DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/i;
/** Epoch numbers below this are seconds, above it milliseconds (1e11 ms is March 1973). */
const EPOCH_SECONDS_BELOW = 1e11;

/**
 * The sequencing `departure`. A zone-less string is a wall-clock time at the places (the platform
 * reads it so, as the spec says of routing times), sent as written: `yyyy-MM-dd'T'HH:mm:ss`. Anything
 * else (a Date, an epoch, a string with a zone) is an instant: `zoned` (the default) writes it in UTC
 * with the designator `Z`, which every reading of the `X` pattern accepts, so the same message sends
 * the same instant whatever the host's time zone; `local` writes its wall-clock time in the Node-RED
 * host's time zone, without a zone.
 */
export function formatDeparture(value: unknown, format: DepartureFormat, label: Label): string {
  const zoneless = typeof value === 'string' ? ZONELESS_DATE_TIME.exec(value.trim()) : null;
  if (zoneless) {
    const [, date, hours, minutes, seconds = '00'] = zoneless;
    checkCalendar(date, `${hours}:${minutes}:${seconds}`, label);
    return `${date}T${hours}:${minutes}:${seconds}`;
  }
  const instant = readInstant(value, label);
  if (format === 'zoned') return `${instant.toISOString().slice(0, 19)}Z`;
  return `${pad(instant.getFullYear(), 4)}-${pad(instant.getMonth() + 1)}-${pad(instant.getDate())}T${pad(instant.getHours())}:${pad(
    instant.getMinutes(),
  )}:${pad(instant.getSeconds())}`;
}

const RFC3339_DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?(Z|z|[+-]\d{2}:\d{2})?$/;
const RFC3339_FULL_DATE = /^\d{4}-\d{2}-\d{2}$/;
const RFC3339_PARTIAL_TIME = /^(\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?$/;

/**
 * `arriveBy` / `departAt`: a string stays as written (an RFC 3339 date-time with or without offset,
 * a full-date or a partial-time; missing seconds are added); a Date or an epoch becomes a UTC date-time.
 */
export function formatRfc3339(value: unknown, label: Label): string {
  if (typeof value === 'string') {
    const text = value.trim();
    const dateTime = RFC3339_DATE_TIME.exec(text);
    if (dateTime) {
      const [, date, hoursMinutes, seconds = ':00', offset = ''] = dateTime;
      checkCalendar(date, `${hoursMinutes}${seconds}`, label);
      return `${date}T${hoursMinutes}${seconds}${offset}`;
    }
    if (RFC3339_FULL_DATE.test(text)) {
      checkCalendar(text, '00:00:00', label);
      return text;
    }
    const time = RFC3339_PARTIAL_TIME.exec(text);
    if (time) {
      const [, hoursMinutes, seconds = ':00'] = time;
      checkCalendar('2000-01-01', `${hoursMinutes}${seconds}`, label);
      return `${hoursMinutes}${seconds}`;
    }
    throw new InputError(catalogText('error.location.notRfc3339', { label, value: JSON.stringify(value) ?? 'undefined' }));
  }
  return `${readInstant(value, label).toISOString().slice(0, 19)}Z`;
}

/** A moment from a Date, an epoch (seconds or milliseconds) or an ISO 8601 date-time string. */
export function readInstant(value: unknown, label: Label): Date {
  let instant: Date | undefined;
  if (value instanceof Date) instant = value;
  else if (typeof value === 'number') instant = new Date(Math.abs(value) < EPOCH_SECONDS_BELOW ? value * 1000 : value);
  else if (typeof value === 'string' && ISO_DATE_TIME.test(value.trim())) instant = new Date(value.trim());
  if (!instant || Number.isNaN(instant.getTime())) {
    throw new InputError(catalogText('error.location.notDate', { label, value: JSON.stringify(value) ?? 'undefined' }));
  }
  return instant;
}

/** Refuses dates and times that do not exist (2025-02-30, 24:10). */
function checkCalendar(date: string, time: string, label: Label): void {
  const [year, month, day] = date.split('-').map(Number);
  const [hours, minutes, seconds] = time.split(':').map(Number);
  const probe = new Date(Date.UTC(year, month - 1, day));
  const dateOk = probe.getUTCFullYear() === year && probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day;
  // RFC 3339 allows a leap second (60).
  const timeOk = hours <= 23 && minutes <= 59 && seconds < 61;
  if (!dateOk || !timeOk) throw new InputError(catalogText('error.location.invalidDate', { label, value: `${date}T${time}` }));
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}
