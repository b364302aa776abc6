import { badRequest, sendJson } from '../http';
import { Sandbox } from '../server';
import { townOf } from '../town/index';
import { MAX_BOX_DEG, streetsGeoJson } from '../town/geojson';

/**
 * `GET /sandbox/streets?bbox=minLon,minLat,maxLon,maxLat` (no credentials; the sandbox's own, not the
 * platform's): the town's streets in the box as GeoJSON LineString features with `name`, `class`,
 * `speedLimit` (km/h or null), `toll`, `tunnel`, `bridge`, `ferry`, `dirtRoad`, `controlledAccess`,
 * `maxHeight` (m or null) and `modes`. A box wider or taller than 0.2° is refused with 400.
 */
const NUMBER = '-?\\d+(?:\\.\\d+)?';
const BBOX = new RegExp(`^(${NUMBER}),(${NUMBER}),(${NUMBER}),(${NUMBER})$`);

export default function streetsEndpoint(sandbox: Sandbox): void {
  sandbox.route('GET', '/sandbox/streets', { endpoint: 'streets', auth: 'none' }, (ctx) => {
    const match = BBOX.exec(ctx.url.searchParams.get('bbox') ?? '');
    if (!match) return void badRequest(ctx.res, 'query parameter bbox is required: minLon,minLat,maxLon,maxLat');
    const [minLon, minLat, maxLon, maxLat] = match.slice(1).map(Number);
    const valid = minLon >= -180 && maxLon <= 180 && minLat >= -85 && maxLat <= 85 && minLon < maxLon && minLat < maxLat;
    if (!valid) return void badRequest(ctx.res, 'bbox: minimums must be less than maximums, within longitude ±180 and latitude ±85');
    if (maxLon - minLon > MAX_BOX_DEG || maxLat - minLat > MAX_BOX_DEG) {
      return void badRequest(ctx.res, `bbox: at most ${MAX_BOX_DEG}° wide and tall in the sandbox`);
    }
    sendJson(ctx.res, 200, streetsGeoJson(townOf(), { minLon, minLat, maxLon, maxLat }));
  });
}
