import type { NodeAPI } from './types';
import { runtimeLog } from './i18n';
import { catalogText } from '../util/catalog-text';

/**
 * Where the user directory is known not to outlive a restart. FlowFuse sets FF_INSTANCE_ID in every
 * Node-RED it runs, and FF_DEVICE_ID as well on a device (the device's own disk, which persists); its
 * launcher is configured through FORGE_PROJECT_ID and FORGE_TEAM_ID (kept from Node-RED unless passed on).
 * Returns the variable that tells, if any.
 */
function ephemeralUserDirVariable(env: NodeJS.ProcessEnv): string | undefined {
  if (env.FF_INSTANCE_ID && !env.FF_DEVICE_ID) return 'FF_INSTANCE_ID';
  return ['FORGE_PROJECT_ID', 'FORGE_TEAM_ID'].find((name) => env[name]);
}

let warned = false;

/**
 * A config node without Redis keeps its state (daily count, stored jobs, webhook replay journal) in files
 * under the user directory: where that directory is lost at each restart, the runtime log says so, once per process.
 */
export function warnIfStateIsLost(RED: Pick<NodeAPI, 'log' | 'settings'>, sharedInRedis: boolean): void {
  if (warned || sharedInRedis || !(RED.settings as { userDir?: string }).userDir) return;
  const variable = ephemeralUserDirVariable(process.env);
  if (!variable) return;
  warned = true;
  runtimeLog(RED).warn(catalogText('warn.stateNotKept', { variable }));
}
