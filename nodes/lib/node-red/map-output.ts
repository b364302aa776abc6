import type { NodeMessage } from './types';
import { translate } from './i18n';
import { catalogText } from '../util/catalog-text';
import { viewCommand } from '../geo/worldmap';
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
  /** The worldmap layer; empty means the node's name, else what its kind draws (`mapLayer.<type>` in the catalog: "geocoded addresses"). */
  worldmapLayer?: string;
}

/** Builds what one result draws on a layer; undefined when there is nothing to draw. */
export type MapBuilder = (layer: string) => MapPayload | undefined;

/** The layer the node draws on, or undefined when it has no Map output. */
export function mapLayerOf(def: MapOutputDef | undefined): string | undefined {
  if (def?.worldmap !== true) return undefined;
  return def.worldmapLayer?.trim() || def.name?.trim() || translate(catalogText(`mapLayer.${def.type}`));
}

/**
 * The Map output's messages for one result (null when there is nothing to draw): one fresh message
 * per shape (no `_sessionid` to narrow it), as worldmap keeps a shape by its name and draws it again
 * on a map page opened later only when a message carries that one shape. The first also carries the
 * worldmap command that shows them all (`bounds`, or a centre and zoom for one point).
 */
export function mapMessages(build: MapBuilder | undefined, layer: string): NodeMessage[] | null {
  const payload = build?.(layer);
  const shapes = payload === undefined ? [] : Array.isArray(payload) ? payload : [payload];
  if (shapes.length === 0) return null;
  const view = viewCommand(shapes);
  return shapes.map((shape, i) => ({ payload: i === 0 && view ? { ...shape, command: view } : shape }));
}
