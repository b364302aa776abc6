import should from 'should';
import { plainText, trimTrailing } from '../../nodes/lib/util/text';
import { PlatformError } from '../../nodes/lib/util/errors';
import { isCredentialName, redact, scrubBody, scrubBytes } from '../../nodes/lib/util/masking';
import { parseSignatureHeader } from '../../nodes/lib/webhook/signature';
import { parseCsv } from '../../nodes/lib/format/csv';
import { resultRecords } from '../../nodes/lib/format/result-file';
import { parseThreeWords } from '../../nodes/lib/geo/words';
import { isGeohash } from '../../nodes/lib/geo/geohash';
import { statusReadsAsFailed } from '../../nodes/lib/platform/jobs';
import { readInteger, readLocationIds, readWebhookAddress, readWebhookHeader } from '../../nodes/lib/platform/topics';
import { normalisePath } from '../../nodes/lib/node-red/http-node';
import { readLocation } from '../../nodes/lib/geo/locations';
import { formatDeparture, formatRfc3339, readInstant } from '../../nodes/lib/geo/dates';
import { memberAt, readChoices } from '../../nodes/lib/util/values';
import { parseRetryAfter } from '../../nodes/lib/platform/retry';

/**
 * Issue 13: no text from a message or a response meets a super-linear pattern. Every function of the
 * pack that applies a regular expression (or a scan) to such text gets the inputs that make a
 * backtracking pattern slow: long runs of the character a pattern repeats, openers without closers,
 * separators without anything between them. The old tag-stripping pattern took 45 s on 200,000 `<`.
 *
 * Each input is timed at 64 KB, 1 MB and 4 MB, in CPU time (so that other processes sharing the
 * machine's cores do not count), the fastest of three runs: at most 500 ms for 64 KB, and 500 ms per
 * MB at 1 and 4 MB. Work that grows faster than the text cannot stay within the same budget per MB at
 * both sizes (a quadratic function within 500 ms at 1 MB would need 8 s at 4 MB), and a case over its
 * bound stops there, so a quadratic function fails in seconds, not minutes. The times are printed;
 * their ratio is not asserted, because the garbage collector changes pace between sizes.
 *
 * Inputs that are large because they hold many results (a CSV of 300,000 rows) are not in this list:
 * the work per result is fixed, and the response size limit bounds how many there can be.
 */

const KB = 1024;
const MB = 1024 * KB;
const SIZES = [64 * KB, 1 * MB, 4 * MB];
const BOUND_MS_PER_MB = 500;

interface Case {
  name: string;
  /** The function under test; its result and any error it throws are of no interest here. */
  run: (text: string) => unknown;
  /** A pathological input of (at least) `length` characters; it is cut to exactly that. */
  input: (length: number) => string;
}

const repeat = (unit: string) => (length: number) => unit.repeat(Math.ceil(length / unit.length));
const surrounded = (before: string, unit: string, after: string) => (length: number) =>
  before + unit.repeat(Math.ceil((length - before.length - after.length) / unit.length)) + after;

const CASES: Case[] = [
  { name: 'plainText: `<` without `>`', run: plainText, input: repeat('<') },
  { name: 'plainText: `<br` without `>`', run: plainText, input: repeat('<br ') },
  { name: 'plainText: one tag holding every `<`', run: plainText, input: surrounded('', '<', '>') },
  { name: 'plainText: entities without `;`', run: plainText, input: repeat('&#x1') },
  { name: 'plainText: named entities without `;`', run: plainText, input: repeat('&amp') },
  { name: 'plainText: lone `&`', run: plainText, input: repeat('&') },
  { name: 'plainText: `&#` without digits', run: plainText, input: repeat('&#') },
  { name: 'plainText: the prefix of a long entity name', run: plainText, input: repeat('&CounterClockwiseContourIntegra') },
  { name: 'plainText: whitespace runs', run: plainText, input: surrounded('a', ' \t\n', 'b') },
  { name: 'trimTrailing (URLs): slashes, then not', run: (text) => trimTrailing(text, '/'), input: surrounded('', '/', 'x') },
  { name: 'trimTrailing (URLs): only slashes', run: (text) => trimTrailing(text, '/'), input: repeat('/') },
  { name: 'redact: quoted secret members', run: (text) => redact(text), input: repeat('token:"') },
  { name: 'redact: escaped quotes in a member', run: (text) => redact(text), input: repeat('"apikey":"\\"') },
  { name: 'redact: members without values', run: (text) => redact(text), input: repeat('"token" : ') },
  { name: 'redact: an unterminated secret value', run: (text) => redact(text), input: surrounded('"password":"', '\\a', '') },
  { name: 'redact: one long name holding credential words', run: (text) => redact(text), input: surrounded('', 'token', ' ') },
  { name: 'redact: names and separators without values', run: (text) => redact(text), input: repeat('a-b: ') },
  { name: 'redact: credential names whose values are names', run: (text) => redact(text), input: repeat('session=pwd:') },
  { name: 'redact: a long name almost credential-like', run: (text) => redact(text), input: surrounded('"', 'passwor', '":') },
  { name: 'credential-like name (webhook headers, stored jobs)', run: isCredentialName, input: repeat('api_ke') },
  { name: 'redact: bearer words', run: (text) => redact(text), input: repeat('Bearer\t') },
  { name: 'redact: a configured secret almost repeated', run: (text) => redact(text, ['abcabd']), input: repeat('abc') },
  { name: 'redact: \\u escapes, some broken', run: (text) => redact(text, ['abcabd']), input: repeat('\\u0061\\u00') },
  { name: 'scrubBytes: a secret almost repeated', run: (text) => scrubBytes(Buffer.from(text), ['abcabd', 'a/b"c']), input: repeat('abc') },
  {
    name: 'scrubBody: strings that almost hold a secret',
    run: (text) => scrubBody([text, text], text, ['abcabd']),
    input: surrounded('\\', 'abc', ''),
  },
  {
    name: 'body excerpt of a huge error response',
    run: (text) => new PlatformError('SERVER', 'x', { body: text, secrets: ['s3cret-key'] }),
    input: repeat('token='),
  },
  { name: 'signature header: long timestamp', run: parseSignatureHeader, input: surrounded('t=', '1', ',digestV1=00') },
  { name: 'signature header: empty parts', run: parseSignatureHeader, input: repeat(',') },
  { name: 'signature header: long digest', run: parseSignatureHeader, input: surrounded('t=1,digestV1=', 'a', 'z') },
  { name: 'CSV: quotes', run: (text) => attempt(() => parseCsv(text)), input: repeat('"') },
  { name: 'CSV: doubled quotes in a field', run: (text) => attempt(() => parseCsv(text)), input: surrounded('"', '""', '') },
  { name: 'CSV: quotes inside unquoted fields', run: (text) => attempt(() => parseCsv(text)), input: repeat('a"') },
  { name: 'CSV: one long field', run: (text) => attempt(() => parseCsv(text)), input: surrounded('"', 'a', '') },
  { name: 'CSV: blank lines', run: (text) => attempt(() => parseCsv(text)), input: repeat('\r\n\r') },
  {
    name: 'bulk result file: white space before the first character',
    run: (text) => attempt(() => resultRecords('', Buffer.from(text))),
    input: surrounded('', ' ', 'x'),
  },
  {
    name: 'bulk result file: JSON lines of line ends',
    run: (text) => attempt(() => resultRecords('application/x-ndjson', Buffer.from(text))),
    input: repeat('\r\r\n'),
  },
  {
    name: 'bulk result file: CSV of quotes',
    run: (text) => attempt(() => resultRecords('text/csv', Buffer.from(text))),
    input: surrounded('address\n"', '""', ''),
  },
  { name: 'three words: dots', run: (text) => attempt(() => parseThreeWords(text)), input: repeat('.') },
  { name: 'three words: letters then a digit', run: (text) => attempt(() => parseThreeWords(text)), input: surrounded('', 'a', '.b.c1') },
  { name: 'three words: slashes', run: (text) => attempt(() => parseThreeWords(text)), input: repeat('/') },
  { name: 'geohash check', run: isGeohash, input: surrounded('', 'b', '!') },
  { name: 'location as a geohash', run: (text) => attempt(() => readLocation(text, 'origin', { lonLatArrays: false })), input: surrounded(' ', 'u', 'a') },
  { name: 'job status reads as failed', run: statusReadsAsFailed, input: repeat('fai') },
  {
    name: 'topic id: spaces around digits',
    run: (text) => attempt(() => readInteger(text, 'topic id', 0)),
    input: (n) => `${' '.repeat(n / 2)}1${' '.repeat(n / 2)}x`,
  },
  { name: 'webhook header name', run: (text) => attempt(() => readWebhookHeader(text)), input: surrounded('', 'a', '(:v') },
  { name: 'webhook address', run: (text) => attempt(() => readWebhookAddress(text)), input: surrounded('http://', 'a', '') },
  { name: 'location ids: commas', run: (text) => attempt(() => readLocationIds(text)), input: repeat(',') },
  { name: 'choices: commas', run: (text) => attempt(() => readChoices(text, ['car', 'truck'], 'modes')), input: repeat(', ') },
  { name: 'member path: dots', run: (text) => memberAt({}, text), input: repeat('.') },
  { name: 'route path of a webhook', run: normalisePath, input: surrounded('', '/', 'x') },
  {
    name: 'departure: long fraction',
    run: (text) => attempt(() => formatDeparture(text, 'local', 'departure')),
    input: surrounded('2025-06-01T08:30:00.', '1', 'x'),
  },
  { name: 'RFC 3339 time: long fraction', run: (text) => attempt(() => formatRfc3339(text, 'arriveBy')), input: surrounded('08:30:00.', '1', 'x') },
  { name: 'ISO instant: long fraction', run: (text) => attempt(() => readInstant(text, 'departAt')), input: surrounded('2025-06-01T08:30:00.', '1', '+0') },
  { name: 'Retry-After: long number', run: parseRetryAfter, input: repeat('1') },
  { name: 'Retry-After: long date', run: parseRetryAfter, input: surrounded('Mon, 01 Jan 2025 ', ' ', 'GMT') },
];

function attempt(run: () => unknown): unknown {
  try {
    return run();
  } catch (err) {
    return err;
  }
}

/**
 * The CPU time (this process's, all threads) of the fastest of three runs; a run past `giveUpMs`
 * is not repeated.
 */
function fastestRunMs(run: () => unknown, giveUpMs: number): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const started = process.cpuUsage();
    run();
    const used = process.cpuUsage(started);
    best = Math.min(best, (used.user + used.system) / 1000);
    if (best > giveUpMs) break;
  }
  return best;
}

function boundMs(size: number): number {
  return BOUND_MS_PER_MB * Math.max(1, size / MB);
}

describe('linear text handling: hostile text takes at most 500 ms per MB, at 1 MB and at 4 MB, in every function that reads it', function () {
  this.timeout(120_000);

  for (const { name, run, input } of CASES) {
    it(name, function () {
      const times: number[] = [];
      for (const size of SIZES) {
        const text = input(size).slice(0, size);
        const ms = fastestRunMs(() => run(text), boundMs(size));
        times.push(ms);
        should(ms).be.below(boundMs(size), `${name}: ${size} characters took ${ms.toFixed(1)} ms`);
      }
      console.log(`      ${name}: ${times.map((ms) => ms.toFixed(1)).join(' / ')} ms at 64 KB / 1 MB / 4 MB`);
    });
  }
});
