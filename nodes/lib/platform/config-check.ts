import { PlatformError } from '../util/errors';
import { Message, message } from '../util/messages';
import type { AuthScheme, ClientConfig } from './client';

/** What a request needs from the configuration: an endpoint family's, or the token endpoint's alone. */
export type Requirement = AuthScheme | 'token';

/** The settings of a config node that requests depend on, named as in flow JSON. */
export type Setting = 'baseUrl' | 'authUrl' | 'sandboxUrl' | 'projectId' | 'apiKey' | 'pubsubApiKey' | 'clientId' | 'clientSecret';

export interface ConfigProblem {
  setting: Setting;
  problem: 'not-set' | 'not-http';
}

const URL_SETTINGS = ['baseUrl', 'authUrl', 'sandboxUrl'] as const;

/** The settings each requirement cannot do without (see AuthScheme for the families). */
const REQUIRED: Record<Requirement, readonly Setting[]> = {
  project: ['baseUrl', 'projectId', 'apiKey'],
  vpm: ['baseUrl', 'projectId', 'apiKey'],
  pubsub: ['baseUrl', 'pubsubApiKey'],
  token: ['authUrl', 'clientId', 'clientSecret'],
  bearer: ['sandboxUrl', 'authUrl', 'clientId', 'clientSecret'],
  none: [],
};


/**
 * What keeps a configuration from serving a requirement: any address that is set but is not an
 * http(s) URL (`api.example.com` without its scheme, say), and any setting the requirement needs that is empty.
 */
export function configProblems(config: ClientConfig, requirement: Requirement): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const setting of URL_SETTINGS) {
    const url = config[setting];
    if (url !== '' && !isHttpUrl(url)) problems.push({ setting, problem: 'not-http' });
  }
  for (const setting of REQUIRED[requirement]) {
    if (!settingValue(config, setting)) problems.push({ setting, problem: 'not-set' });
  }
  return problems;
}

function settingValue(config: ClientConfig, setting: Setting): string | undefined {
  switch (setting) {
    case 'baseUrl':
    case 'authUrl':
    case 'sandboxUrl':
    case 'projectId':
      return config[setting];
    default:
      return config.credentials[setting];
  }
}

export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** One problem: "the base URL is not an http(s) URL", "the API key is not set". */
export function describeProblem({ setting, problem }: ConfigProblem): Message {
  return message(problem === 'not-set' ? 'config.notSet' : 'config.notHttp', { setting: message(`setting.${setting}`) });
}

/** The error for a message that a configuration cannot serve: nothing was sent, and nothing is retried. */
export class ConfigError extends PlatformError {
  constructor(readonly problems: ConfigProblem[]) {
    super('CONFIG_INVALID', message('error.configInvalid', { problems: problems.map(describeProblem) }), { notSent: true });
  }
}
