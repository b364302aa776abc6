import { SPEC_GEOCODE_LIMITS, SandboxModes } from './options';

/**
 * The sandbox's modes from the environment, for `npm start` and `npm run sandbox`:
 * - `SANDBOX_DURATIONS`: `typical` (single geocodes take the spec's 100–200 ms, about 750 ms for a
 *   descriptive address) or `off` (every response at once);
 * - `SANDBOX_RATE_LIMIT`: `on` (429 with Retry-After beyond the spec's recommended 80 single geocodes a
 *   minute), a number of requests a minute, or `off`;
 * - `SANDBOX_DAILY_LIMIT`: `on` (429 beyond the spec's 50,000 single geocodes a day), a number, or `off`.
 * Unset, each takes its default from `defaults` (the limits are off unless given).
 */
export function modesFromEnv(env: NodeJS.ProcessEnv, defaults: { typicalDurations: boolean }): SandboxModes {
  const durations = env.SANDBOX_DURATIONS?.trim().toLowerCase();
  if (durations !== undefined && durations !== '' && durations !== 'typical' && durations !== 'off') {
    throw new Error(`SANDBOX_DURATIONS must be typical or off, got ${JSON.stringify(env.SANDBOX_DURATIONS)}`);
  }
  return {
    typicalDurations: durations === undefined || durations === '' ? defaults.typicalDurations : durations === 'typical',
    geocodeRatePerMinute: limit(env, 'SANDBOX_RATE_LIMIT', SPEC_GEOCODE_LIMITS.perMinute),
    geocodeDailyLimit: limit(env, 'SANDBOX_DAILY_LIMIT', SPEC_GEOCODE_LIMITS.perDay),
  };
}

function limit(env: NodeJS.ProcessEnv, name: string, spec: number): number | undefined {
  const value = env[name]?.trim().toLowerCase();
  if (value === undefined || value === '' || value === 'off') return undefined;
  if (value === 'on') return spec;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be on, off or a whole number of requests, got ${JSON.stringify(env[name])}`);
  return n;
}

/** One line saying which modes are on, for the console. */
export function describeModes(modes: SandboxModes): string {
  const parts = [
    modes.typicalDurations ? 'typical durations (SANDBOX_DURATIONS=off turns them off)' : 'no durations (SANDBOX_DURATIONS=typical adds them)',
    modes.geocodeRatePerMinute === undefined ? 'no rate limit (SANDBOX_RATE_LIMIT=on)' : `${modes.geocodeRatePerMinute} geocodes a minute`,
    modes.geocodeDailyLimit === undefined ? 'no daily limit (SANDBOX_DAILY_LIMIT=on)' : `${modes.geocodeDailyLimit} geocodes a day`,
  ];
  return `sandbox modes: ${parts.join(', ')}`;
}
