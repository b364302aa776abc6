import { migrations as table, pollIntervalInSeconds } from '../lib/node-red/migrations';

/** The settings migrations of svc-isoline (lib/node-red/migrations.ts says how they run). */
export const migrations = table([pollIntervalInSeconds(1000)]);
