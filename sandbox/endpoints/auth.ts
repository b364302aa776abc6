import { randomBytes } from 'node:crypto';
import { badRequest, sendJson } from '../http';
import { SANDBOX_LIMITS, makeRoomIn } from '../options';
import { Sandbox } from '../server';

/** `POST {auth_url}/oauth/token`: client-credentials tokens that expire after `tokenLifetimeSec`. */
export default function tokenEndpoint(sandbox: Sandbox): void {
  sandbox.route('POST', '/oauth/token', { endpoint: 'token', auth: 'none' }, (ctx) => {
    const body = ctx.json();
    if (body === undefined) return;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return void badRequest(ctx.res, 'body must be a JSON object');
    const fields = body as Record<string, unknown>;
    for (const name of ['client_id', 'client_secret', 'audience', 'grant_type']) {
      if (typeof fields[name] !== 'string' || fields[name] === '') return void badRequest(ctx.res, `${name} is required`);
    }
    if (fields.grant_type !== 'client_credentials') {
      return void sendJson(ctx.res, 400, { error: 'unsupported_grant_type', message: 'grant_type must be client_credentials' });
    }
    const { options } = sandbox;
    if (fields.client_id !== options.clientId || fields.client_secret !== options.clientSecret) {
      return void sendJson(ctx.res, 401, { error: 'access_denied', message: 'Unauthorized' });
    }
    if (fields.audience !== options.audience) {
      return void sendJson(ctx.res, 403, { error: 'access_denied', message: 'Service not enabled within domain' });
    }
    const lifetime = options.tokenLifetimeSec;
    const token = issueToken(sandbox, lifetime, options.tokenResponse !== 'opaque-no-expiry');
    const response: Record<string, unknown> = { access_token: token, token_type: 'Bearer' };
    if (options.tokenResponse === 'standard') response.expires_in = lifetime;
    sendJson(ctx.res, 200, response);
  });
}

/** Issues a token the bearer check accepts until it expires; a JWT when `asJwt`, else opaque. */
export function issueToken(sandbox: Sandbox, lifetimeSec: number, asJwt: boolean): string {
  const expiresAt = sandbox.clock.now() + lifetimeSec * 1000;
  const nonce = randomBytes(12).toString('base64url');
  const token = asJwt
    ? [
        Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url'),
        Buffer.from(JSON.stringify({ sub: 'sandbox', exp: Math.floor(expiresAt / 1000), jti: nonce })).toString('base64url'),
        'sandbox',
      ].join('.')
    : nonce;
  const tokens = sandbox.stateOf('tokens', () => new Map<string, number>());
  makeRoomIn(tokens, SANDBOX_LIMITS.tokens, (expires) => expires <= sandbox.clock.now());
  tokens.set(token, expiresAt);
  return token;
}

/** Makes every token issued so far expire now (the moment a token storm is tested at). */
export function expireAllTokens(sandbox: Sandbox): void {
  const tokens = sandbox.stateOf('tokens', () => new Map<string, number>());
  for (const token of tokens.keys()) tokens.set(token, sandbox.clock.now());
}
