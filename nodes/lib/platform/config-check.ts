import { ConfigError } from '../util/errors';
import { CatalogText, catalogText } from '../util/catalog-text';
import type { AuthScheme, ClientConfig } from './types';
import { isHeaderValue } from '../util/text';

/** What a request needs from the configuration: an endpoint family's, or the token endpoint's alone. */
export type Requirement = AuthScheme | 'token';

/** The settings of a config node that requests depend on, named as in flow JSON. */
export type Setting = 'platform' | 'baseUrl' | 'authUrl' | 'sandboxUrl' | 'audience' | 'projectId' | 'apiKey' | 'pubsubApiKey' | 'clientId' | 'clientSecret';

export interface ConfigProblem {
  setting: Setting;
  problem: 'not-set' | 'not-http' | 'not-header-value' | 'not-path-segment' | 'sandbox-unavailable' | UrlExtra;
  /** Why, for 'sandbox-unavailable' (the built-in sandbox cannot be served by this Node-RED). */
  reason?: CatalogText;
}

/** Settings sent as header values: CR, LF or another control in one would split the request. */
const HEADER_SETTINGS: readonly Setting[] = ['projectId', 'apiKey', 'pubsubApiKey'];

/**
 * What an address may not carry besides scheme, host, port and path: a query or a fragment would
 * swallow the endpoint paths appended to it (`https://h/api?x=` + `/v1/geocode` sends the key to
 * `/api`), and user info would be sent along with every request.
 */
type UrlExtra = 'has-query' | 'has-fragment' | 'has-user-info';

const URL_SETTINGS = ['baseUrl', 'authUrl', 'sandboxUrl'] as const;

/**
 * The settings each requirement cannot do without (see AuthScheme for the families). The token request
 * sends the audience, which the spec lists as required: an empty one is refused before any request.
 */
const REQUIRED: Record<Requirement, ReadonlyArray<Exclude<Setting, 'platform'>>> = {
  project: ['baseUrl', 'projectId', 'apiKey'],
  vpm: ['baseUrl', 'projectId', 'apiKey'],
  pubsub: ['baseUrl', 'pubsubApiKey'],
  token: ['authUrl', 'clientId', 'clientSecret', 'audience'],
  bearer: ['sandboxUrl', 'authUrl', 'clientId', 'clientSecret', 'audience'],
  none: [],
};

/**
 * What keeps a configuration from serving a requirement: any address that is set but is not an
 * http(s) URL (`api.example.com` without its scheme, say) or carries a query, a fragment or user
 * info, and any setting the requirement needs that is empty.
 */
export function configProblems(config: ClientConfig, requirement: Requirement): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (config.sandboxUnavailable) problems.push({ setting: 'platform', problem: 'sandbox-unavailable', reason: config.sandboxUnavailable });
  for (const setting of URL_SETTINGS) {
    const url = config[setting];
    if (url === '') continue;
    const problem = isHttpUrl(url) ? urlExtra(url) : 'not-http';
    if (problem) problems.push({ setting, problem });
  }
  for (const setting of REQUIRED[requirement]) {
    const value = settingValue(config, setting);
    if (!value) problems.push({ setting, problem: 'not-set' });
    else if (HEADER_SETTINGS.includes(setting) && !isHeaderValue(value)) problems.push({ setting, problem: 'not-header-value' });
    // The project id is also a segment of the sequence paths.
    else if (setting === 'projectId' && (value === '.' || value === '..')) problems.push({ setting, problem: 'not-path-segment' });
  }
  return problems;
}

function settingValue(config: ClientConfig, setting: Exclude<Setting, 'platform'>): string | undefined {
  switch (setting) {
    case 'baseUrl':
    case 'authUrl':
    case 'sandboxUrl':
    case 'audience':
    case 'projectId':
      return config[setting];
    default:
      return config.credentials[setting];
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * A query, a fragment or user info in an http(s) address, judged on the text as written: `new URL`
 * drops an empty query or fragment (`https://h/api?`, `https://h/api#`) and an empty user (`https://@h`).
 */
function urlExtra(text: string): UrlExtra | undefined {
  if (text.includes('?')) return 'has-query';
  if (text.includes('#')) return 'has-fragment';
  const url = new URL(text);
  const authority = /^[a-z]+:[/\\]*([^/\\]*)/i.exec(text.trim())?.[1] ?? '';
  if (url.username !== '' || url.password !== '' || authority.includes('@')) return 'has-user-info';
  return undefined;
}

const PROBLEM_TEXTS: Record<ConfigProblem['problem'], string> = {
  'not-set': 'config.notSet',
  'not-http': 'config.notHttp',
  'not-header-value': 'config.notHeaderValue',
  'not-path-segment': 'config.notPathSegment',
  'sandbox-unavailable': 'config.sandboxUnavailable',
  'has-query': 'config.hasQuery',
  'has-fragment': 'config.hasFragment',
  'has-user-info': 'config.hasUserInfo',
};

/** One problem: "the base URL is not an http(s) URL", "the API key is not set". */
export function describeProblem({ setting, problem, reason }: ConfigProblem): CatalogText {
  return catalogText(PROBLEM_TEXTS[problem], { setting: catalogText(`setting.${setting}`), ...(reason ? { reason } : {}) });
}

/** The error for a message that a configuration cannot serve: nothing was sent, and nothing is retried. */
export function configInvalid(problems: ConfigProblem[]): ConfigError {
  return new ConfigError(catalogText('error.configInvalid', { problems: problems.map(describeProblem) }));
}
