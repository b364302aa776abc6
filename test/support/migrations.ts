import path from 'node:path';
import type { Migrations } from '../../nodes/lib/node-red/migrations';
import { NODES_DIR } from './paths';

/** The settings migrations of node `type` as the runtime applies them (its folder's migrations.ts, built). */
function tableOf(type: string): Migrations {
  // A node's table, found by its type at run time.
  return (require(path.join(NODES_DIR, type, 'migrations.js')) as { migrations: Migrations }).migrations;
}

/** Settings of a node at its type's current version (a copy; the object given is left as it is). */
export function migrated<T extends { type: string }>(settings: T): T {
  return tableOf(settings.type).migrate(settings);
}

/** The settings version a node of `type` saves now. */
export function currentVersion(type: string): number {
  return tableOf(type).version;
}
