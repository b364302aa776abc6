import type { NodeMessage, NodeMessageInFlow } from './types';
import { translate } from './i18n';
import { catalogText } from '../util/catalog-text';
import { viewCommand } from '../geo/worldmap';
import type { MapPayload } from '../geo/worldmap';
import { positiveSetting } from './settings';

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
  /** Seconds worldmap keeps each shape (its `ttl`); empty keeps worldmap's own maximum age. */
  worldmapTtl?: number | string;
  /** Each input's result replaces what the layer shows, instead of adding to it. */
  worldmapClear?: boolean;
}

/** The Map output as a node runs it. */
export interface MapOutput {
  layer: string;
  /** worldmap's `ttl` of every shape, in seconds; undefined: worldmap's own maximum age. */
  ttl?: number;
  /** The layer is cleared before an input's first shapes. */
  clear: boolean;
}

/** Builds what one result draws on a layer; undefined when there is nothing to draw. */
export type MapBuilder = (layer: string) => MapPayload | undefined;

/** The node's Map output, or undefined when it has none. */
export function mapOutputOf(def: MapOutputDef | undefined): MapOutput | undefined {
  if (def?.worldmap !== true) return undefined;
  const layer = def.worldmapLayer?.trim() || def.name?.trim() || translate(catalogText(`mapLayer.${def.type}`));
  return { layer, ttl: positiveSetting(def.worldmapTtl), clear: def.worldmapClear === true };
}

/**
 * The Map output's messages for one result (null when there is nothing to send): one fresh message
 * per shape, as worldmap keeps a shape by its name and draws it again on a map page opened later only
 * when a message carries that one shape. The first shape also carries the worldmap command that shows
 * them all (`bounds`, or a centre and zoom for one point). With `clearFirst`, a message clearing the
 * layer goes before them, even when nothing is drawn: worldmap's `clearlayer` for the pages open, and
 * `map.delete` of the layer so that worldmap forgets its shapes for pages opened later. An input
 * carrying `_sessionid` (a worldmap page's session) has every message carry it, so only that page
 * draws them, and its clearing leaves other pages' shapes alone (no `map.delete`).
 */
export function mapMessages(build: MapBuilder | undefined, output: MapOutput, input: NodeMessageInFlow, clearFirst: boolean): NodeMessage[] | null {
  const payload = build?.(output.layer);
  const shapes = payload === undefined ? [] : Array.isArray(payload) ? payload : [payload];
  const session = typeof input._sessionid === 'string' ? { _sessionid: input._sessionid } : undefined;
  const messages: NodeMessage[] = [];
  if (clearFirst) {
    const command = session ? { clearlayer: output.layer } : { clearlayer: output.layer, map: { delete: output.layer } };
    messages.push({ payload: { command }, ...session });
  }
  const view = viewCommand(shapes);
  shapes.forEach((shape, i) => {
    const drawn = output.ttl === undefined ? shape : { ...shape, ttl: output.ttl };
    messages.push({ payload: i === 0 && view ? { ...drawn, command: view } : drawn, ...session });
  });
  return messages.length > 0 ? messages : null;
}
