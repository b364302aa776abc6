import { InputError } from '../util/errors';
import { catalogText } from '../util/catalog-text';
import { trimTrailing } from '../util/text';
import { MAX_SEGMENT_LENGTH, hasDotSegment } from './paths';
import type { PlatformRequest } from './types';

/**
 * Where the requests of one configuration go: the link a request was given, or its path at the address
 * of its family, with its query. Each path is worked out (and checked) once, not per request.
 */
export class RequestTargets {
  private readonly known = new Map<string, RequestTarget>();

  constructor(private readonly addresses: Record<AddressSetting, string>) {}

  /** The path at the address of `setting`, with no query (the token endpoint's). */
  at(setting: AddressSetting, path: string): RequestTarget {
    return targetOf(joinUrl(this.addresses[setting], path));
  }

  of(req: PlatformRequest): RequestTarget {
    if (req.url) {
      if (req.path) refuseDotSegments(req.path);
      return withQuery(new URL(req.url), req.query);
    }
    const setting = addressOf(req);
    const path = req.path ?? '/';
    const key = `${setting} ${path}`;
    let target = this.known.get(key);
    if (!target) {
      refuseDotSegments(path);
      const url = joinUrl(this.addresses[setting], path);
      // An address with a query of its own has it written again with the request's (rare): not kept.
      if (url.search !== '') return withQuery(url, req.query);
      target = targetOf(url);
      if (this.known.size >= MAX_KEPT_TARGETS) this.known.clear();
      this.known.set(key, target);
    }
    const query = req.query ? queryText(req.query) : '';
    return query === '' ? target : { origin: target.origin, path: `${target.path}?${query}` };
  }
}

/** The settings that hold the platform's addresses. */
export type AddressSetting = 'baseUrl' | 'authUrl' | 'sandboxUrl';

/** The setting whose address a request goes to: the words endpoints (bearer token) at the Words URL, the others at the Base URL (links it hands out included). */
export function addressOf(req: PlatformRequest): Exclude<AddressSetting, 'authUrl'> {
  return req.auth === 'bearer' ? 'sandboxUrl' : 'baseUrl';
}

/** The last check of a path: one whose values were not made segments by `pathSegment` (a stored job's) climbs nowhere. */
function refuseDotSegments(path: string): void {
  if (!hasDotSegment(path)) return;
  throw new InputError(
    catalogText('error.pathSegment', { what: catalogText('value.requestPath'), value: JSON.stringify(path.slice(0, 80)), max: MAX_SEGMENT_LENGTH }),
  );
}

/** An origin, and a path with its query: what undici is given. */
export interface RequestTarget {
  origin: string;
  path: string;
}

/** Paths kept in `RequestTargets`: the endpoints' own and some job links; the map starts again when full. */
const MAX_KEPT_TARGETS = 256;

function targetOf(url: URL): RequestTarget {
  return { origin: url.origin, path: url.pathname + url.search };
}

type Query = NonNullable<PlatformRequest['query']>;

/** Sets each member of `query` that is not undefined on `params`, as text. */
function setQuery(params: URLSearchParams, query: Query): void {
  for (const name in query) {
    const value = query[name];
    if (value !== undefined) params.set(name, String(value));
  }
}

/**
 * The query of a request as `URLSearchParams` writes it, a space as `%20` rather than its `+`; '' for
 * none. `URLSearchParams` writes a `+` of the text as `%2B`, so each `+` it leaves is a space; `%20`
 * reads as a space to every server, where `+` does only to one that decodes queries as forms.
 */
function queryText(query: Query): string {
  const params = new URLSearchParams();
  setQuery(params, query);
  return spacesEncoded(params.toString());
}

function spacesEncoded(text: string): string {
  return text.includes('+') ? text.replaceAll('+', '%20') : text;
}

/** `url` with the request's query set on it, as a link or an address with a query of its own needs. */
function withQuery(url: URL, query: Query | undefined): RequestTarget {
  const given = url.search;
  if (query) setQuery(url.searchParams, query);
  // A query as the link wrote it stays as written; one `URLSearchParams` wrote again has its spaces as `%20`.
  return { origin: url.origin, path: url.pathname + (url.search === given ? given : spacesEncoded(url.search)) };
}

function joinUrl(base: string, path: string): URL {
  return new URL(trimTrailing(base, '/') + (path.startsWith('/') ? path : `/${path}`));
}
