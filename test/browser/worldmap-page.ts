import type { Page } from 'playwright-core';

/**
 * What Leaflet drew on worldmap's page (/worldmap), read inside the page. worldmap keeps every shape
 * it drew by name in its globals `markers` (points, GeoJSON) and `polygons` (lines, areas), each
 * with the layer it is on (`lay`); a shape counts as drawn when it is on the map and its element
 * (marker icon or SVG path) is in the document.
 */

/** A drawn leaf shape: a marker, a polyline or a polygon, positions as [lat, lon]. */
export interface DrawnShape {
  name: string;
  kind: 'marker' | 'line' | 'polygon';
  /** Marker: its position; line: its points; polygon: its outer ring (Leaflet drops the closing point). */
  points: Array<[number, number]>;
  /** The permanent label next to a marker (worldmap's `label`). */
  label?: string;
  dashed: boolean;
  /** On the map and in the document. */
  drawn: boolean;
}

/** The Leaflet and worldmap parts the page functions touch (the project compiles without the DOM library). */
interface LatLng {
  lat: number;
  lng: number;
}
interface LeafletLayer {
  lay?: string;
  firstDrawing?: boolean;
  options: { dashArray?: string };
  _icon?: unknown;
  _path?: unknown;
  getLatLng?(): LatLng;
  getLatLngs?(): unknown;
  getTooltip?(): { getContent(): unknown } | undefined;
  eachLayer?(visit: (layer: LeafletLayer) => void): void;
}
export interface MapWindow {
  L: { Marker: new () => unknown; Polygon: new () => unknown; Polyline: new () => unknown };
  map: { hasLayer(layer: LeafletLayer): boolean; setView(center: [number, number], zoom: number): void; closePopup(): void };
  markers: Record<string, LeafletLayer>;
  polygons: Record<string, LeafletLayer>;
  overlays: Record<string, LeafletLayer>;
  ws?: { readyState: number };
  document: { body: { contains(node: unknown): boolean } };
}

/** Opens worldmap and waits until its socket is connected (it then receives the node's settings). */
export async function openMap(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => (globalThis as unknown as MapWindow).ws?.readyState === 1, undefined, { timeout: 20_000 });
}

/** Every shape drawn on one layer. */
export function drawnOn(page: Page, layer: string): Promise<DrawnShape[]> {
  return page.evaluate((layerName) => {
    const { L, map, markers, polygons, document } = globalThis as unknown as MapWindow;
    const shapes: DrawnShape[] = [];
    const pair = (p: LatLng): [number, number] => [p.lat, p.lng];
    const visit = (name: string, layer: LeafletLayer): void => {
      const drawn = map.hasLayer(layer) && document.body.contains(layer._icon ?? layer._path ?? null);
      const dashed = Boolean(layer.options.dashArray);
      if (layer instanceof L.Marker && layer.getLatLng) {
        const label = layer.getTooltip?.()?.getContent();
        shapes.push({ name, kind: 'marker', points: [pair(layer.getLatLng())], label: typeof label === 'string' ? label : undefined, dashed, drawn });
      } else if (layer instanceof L.Polygon && layer.getLatLngs) {
        const [outer] = layer.getLatLngs() as LatLng[][];
        shapes.push({ name, kind: 'polygon', points: outer.map(pair), dashed, drawn });
      } else if (layer instanceof L.Polyline && layer.getLatLngs) {
        shapes.push({ name, kind: 'line', points: (layer.getLatLngs() as LatLng[]).map(pair), dashed, drawn });
      } else {
        // A GeoJSON group: its features are the drawn shapes.
        layer.eachLayer?.((child) => visit(name, child));
      }
    };
    for (const table of [markers, polygons]) {
      for (const [name, layer] of Object.entries(table)) if (layer.lay === layerName) visit(name, layer);
    }
    return shapes;
  }, layer);
}

/** Waits until a layer shows `count` drawn shapes, and returns them. */
export async function waitForShapes(page: Page, layer: string, count: number): Promise<DrawnShape[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const shapes = (await drawnOn(page, layer)).filter((shape) => shape.drawn);
    if (shapes.length >= count || Date.now() > deadline) return shapes;
    await page.waitForTimeout(100);
  }
}

/** How many features the offline countries outline drew, once its TopoJSON has loaded (at most 15 s). */
export async function countriesDrawn(page: Page): Promise<number> {
  const features = await page.waitForFunction(
    () => {
      const { map, overlays } = globalThis as unknown as MapWindow;
      const countries = overlays.countries;
      let count = 0;
      if (countries && map.hasLayer(countries)) countries.eachLayer?.(() => count++);
      return count > 0 && count;
    },
    undefined,
    { timeout: 15_000 },
  );
  return (await features.jsonValue()) as number;
}

/** Tags the Leaflet object now drawn for a name, so that `replaced` can tell when worldmap drew it anew. */
export async function markFirstDrawing(page: Page, name: string): Promise<void> {
  await page.evaluate((shape) => {
    (globalThis as unknown as MapWindow).markers[shape].firstDrawing = true;
  }, name);
}

/** Waits until worldmap has replaced the tagged drawing of a name with a new one. */
export async function replaced(page: Page, name: string): Promise<void> {
  await page.waitForFunction((shape) => (globalThis as unknown as MapWindow).markers[shape]?.firstDrawing === undefined, name, { timeout: 20_000 });
}
