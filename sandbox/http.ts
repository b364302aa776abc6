import type http from 'node:http';

/** The sandbox's HTTP helpers: its JSON responses and error bodies, content negotiation, request bodies. */

/** `application/json` or a `+json` type, with or without parameters. */
const JSON_CONTENT_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Whether an `Accept` header admits a response of media type `type` (RFC 9110, 12.5.1): no header, or an
 * empty one, admits anything; otherwise the most specific range that matches (`text/csv`, then
 * `text/*`, then `*\/*`) must have a quality above 0.
 */
export function accepts(header: string | undefined, type: string): boolean {
  if (header === undefined || header.trim() === '') return true;
  const [main, sub] = type.split(';')[0].trim().toLowerCase().split('/');
  let specificity = -1;
  let quality = 0;
  for (const range of header.split(',')) {
    const [media, ...params] = range.split(';');
    const [rangeMain, rangeSub] = media.trim().toLowerCase().split('/');
    const level = rangeMain === main && rangeSub === sub ? 2 : rangeMain === main && rangeSub === '*' ? 1 : rangeMain === '*' && rangeSub === '*' ? 0 : -1;
    if (level <= specificity) continue;
    const q = params.map((param) => param.trim().toLowerCase()).find((param) => param.startsWith('q='));
    specificity = level;
    quality = q === undefined ? 1 : Number(q.slice(2));
  }
  return specificity >= 0 && quality > 0;
}

/** 406 with the sandbox's JSON error body: the response would be of `type`, which the request's `Accept` does not admit. */
export function notAcceptable(res: http.ServerResponse, type: string, accept: string | undefined): void {
  sendJson(res, 406, { error: 'not_acceptable', message: `this response is ${type.split(';')[0]}; the request accepts only ${accept ?? ''}` });
}

/** 400 with the sandbox's JSON error body; returns false so validators can `return badRequest(...)`. */
export function badRequest(res: http.ServerResponse, message: string): false {
  sendJson(res, 400, { error: 'bad_request', message });
  return false;
}

/** The request's body, or 'too large' (nothing more kept) as soon as it is declared or found larger than `max` bytes. */
export function readBody(req: http.IncomingMessage, max: number): Promise<Buffer | 'too large'> {
  if (Number(req.headers['content-length'] ?? 0) > max) return Promise.resolve('too large');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.off('data', onData);
        req.pause();
        chunks.length = 0;
        resolve('too large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The body parsed as JSON; undefined after responding with 415 when the content type is not JSON, or 400 when the body is not JSON. */
export function jsonBody(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): unknown {
  // As a real service: a body is read as JSON only when its content type says so.
  if (!JSON_CONTENT_TYPE.test(req.headers['content-type'] ?? '')) {
    sendJson(res, 415, { error: 'unsupported_media_type', message: 'Content-Type must be application/json' });
    return undefined;
  }
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    sendJson(res, 400, { error: 'bad_request', message: 'body is not valid JSON' });
    return undefined;
  }
}
