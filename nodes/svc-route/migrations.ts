import { migrations as table, VERSIONED } from '../lib/node-red/migrations';

/** The settings migrations of svc-route (lib/node-red/migrations.ts says how they run). */
export const migrations = table([VERSIONED]);
