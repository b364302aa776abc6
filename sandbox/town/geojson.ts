import { Edge, Town } from './network';
import { Bounds } from './graph';

/** The widest box of streets served at once, in degrees each way. */
export const MAX_BOX_DEG = 0.2;

/** The streets of a box as a GeoJSON FeatureCollection of LineStrings, one per edge touching the box. */
export function streetsGeoJson(town: Town, box: Bounds): { type: 'FeatureCollection'; features: unknown[] } {
  const features = town
    .edgesIn(box.minLon, box.minLat, box.maxLon, box.maxLat)
    .filter((edge) => touches(edge, box))
    .map((edge) => ({
      type: 'Feature',
      geometry: { type: 'LineString', coordinates: edge.line },
      properties: {
        name: edge.name,
        class: edge.cls,
        speedLimit: edge.speedLimit,
        toll: edge.toll,
        tunnel: edge.tunnel,
        bridge: edge.bridge,
        ferry: edge.ferry,
        dirtRoad: edge.dirtRoad,
        controlledAccess: edge.controlledAccess,
        maxHeight: edge.maxHeight,
        modes: edge.modes,
      },
    }));
  return { type: 'FeatureCollection', features };
}

/** Whether an edge's straight line meets a box (Liang–Barsky clipping). */
export function touches(edge: Edge, box: Bounds): boolean {
  const [a, b] = [edge.line[0], edge.line[edge.line.length - 1]];
  let t0 = 0;
  let t1 = 1;
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const clips: Array<[number, number]> = [
    [-dx, a[0] - box.minLon],
    [dx, box.maxLon - a[0]],
    [-dy, a[1] - box.minLat],
    [dy, box.maxLat - a[1]],
  ];
  for (const [p, q] of clips) {
    if (p === 0) {
      if (q < 0) return false;
    } else {
      const t = q / p;
      if (p < 0) t0 = Math.max(t0, t);
      else t1 = Math.min(t1, t);
      if (t0 > t1) return false;
    }
  }
  return true;
}
