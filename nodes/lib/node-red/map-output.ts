import type { NodeMessage } from './types';
import type { MapPayload } from '../geo/worldmap';

/**
 * The Map output option of the locating nodes (like node-red-node-geofence's "worldmap" option):
 * when `worldmap` is set, the node has a second output whose messages worldmap draws as they are.
 */

/** The option as stored in flow JSON, beside the node's own name and type. */
export interface MapOutputDef {
  type: string;
  name?: string;
  worldmap?: boolean;
  /** The worldmap layer; empty means the node's name, else its type. */
  worldmapLayer?: string;
}

/** Builds what one result draws on a layer; undefined when there is nothing to draw. */
export type MapBuilder = (layer: string) => MapPayload | undefined;

/** The layer the node draws on, or undefined when it has no Map output. */
export function mapLayerOf(def: MapOutputDef | undefined): string | undefined {
  if (def?.worldmap !== true) return undefined;
  return def.worldmapLayer?.trim() || def.name?.trim() || def.type;
}

/** The Map output's message for one result: a fresh message (no `_sessionid` to narrow it), or null when there is nothing to draw. */
export function mapMessage(build: MapBuilder | undefined, layer: string): NodeMessage | null {
  const payload = build?.(layer);
  if (payload === undefined || (Array.isArray(payload) && payload.length === 0)) return null;
  return { payload };
}
