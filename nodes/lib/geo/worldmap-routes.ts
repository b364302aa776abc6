import { LatLon, distanceMeters, fromPosition } from './geohash';
import type { Place } from './locations';
import { Fields, isRecord } from '../util/values';
import {
  END_COLOR,
  INDOOR_COLOR,
  MapPayload,
  MapShape,
  ROUTE_COLOR,
  START_COLOR,
  STOP_COLOR,
  durationText,
  escapeHtml,
  latLon,
  lengthText,
  placeLabel,
  placesLabel,
  popupTable,
} from './worldmap';

/** worldmap shapes of results that run through waypoints: a sequence's stops and legs, a route's line. */

/**
 * Sequence: the stops as markers labelled 1, 2, 3 … in visiting order (arrival and departure in
 * their popups) and the legs between them as one line. `geojson` is the sequence node's output.
 */
export function sequenceShapes(geojson: Fields, places: Place[], layer: string): MapPayload {
  const query = escapeHtml(`sequence ${placesLabel(places)}`);
  const features = Array.isArray(geojson.features) ? (geojson.features as Fields[]) : [];
  const stops = features.filter((feature) => isRecord(feature.geometry) && feature.geometry.type === 'Point');
  const markers = stops.map((stop, k): MapShape => {
    const properties = isRecord(stop.properties) ? stop.properties : {};
    const point = fromPosition((stop.geometry as Fields).coordinates, 'stop');
    const input = typeof properties.input === 'number' ? places[properties.input] : undefined;
    return {
      name: `${query} #${k + 1}`,
      layer,
      lat: point.lat,
      lon: point.lon,
      icon: 'circle',
      iconColor: k === 0 ? START_COLOR : k === stops.length - 1 ? END_COLOR : STOP_COLOR,
      label: String(k + 1),
      popup: popupTable([
        ['stop', k + 1],
        ['waypoint', input ? placeLabel(input) : undefined],
        ['estimatedArrival', properties.estimatedArrival],
        ['estimatedDeparture', properties.estimatedDeparture],
        ['distance', properties.distance],
        ['time', properties.time],
      ]),
    };
  });
  const line = stops.map((stop) => latLon(fromPosition((stop.geometry as Fields).coordinates, 'stop')));
  const legs: MapShape[] = line.length < 2 ? [] : [{ name: `${query} legs`, layer, line, color: STOP_COLOR, weight: 4, dashArray: '8 6' }];
  return [...legs, ...markers];
}

/** A stretch of the route line between two waypoints, and whether it touches an indoor waypoint. */
interface Leg {
  from: number;
  to: number;
  /** First and last index into the line. */
  start: number;
  end: number;
  indoor: boolean;
}

/**
 * The route line cut at its waypoints: a waypoint splits the line at the nearest line point after the
 * previous cut. A waypoint without a known position (an indoor one given by venue and unit) is not a
 * cut: its stretch runs on to the next known one.
 */
export function routeLegs(line: LatLon[], places: Place[]): Leg[] {
  const legs: Leg[] = [];
  let from = 0;
  let start = 0;
  for (let to = 1; to < places.length; to++) {
    const point = places[to].point;
    const last = to === places.length - 1;
    if (!last && !point) continue;
    let end = line.length - 1;
    if (!last && point) {
      for (let i = start; i < line.length; i++) if (distanceMeters(line[i], point) < distanceMeters(line[end], point)) end = i;
    }
    legs.push({ from, to, start, end, indoor: places.slice(from, to + 1).some(isIndoor) });
    from = to;
    start = end;
  }
  return legs;
}

function isIndoor(place: Place): boolean {
  return place.venueId !== undefined || place.unitId !== undefined || place.specObject?.type === 'indoor';
}

/**
 * Route: the line with the route's length, duration and every instruction in its popup, start and
 * end markers, and each stretch touching an indoor waypoint drawn over it as a dashed purple line.
 * `geojson` is the route node's output: the whole line first, then one feature per segment.
 */
export function routeShapes(geojson: Fields, places: Place[], layer: string): MapPayload {
  const query = escapeHtml(`route ${placesLabel(places)}`);
  const [whole, ...segments] = Array.isArray(geojson.features) ? (geojson.features as Fields[]) : [];
  const coordinates = isRecord(whole?.geometry) && Array.isArray(whole.geometry.coordinates) ? (whole.geometry.coordinates as unknown[]) : [];
  const line = coordinates.map((position) => fromPosition(position, 'route'));
  if (line.length < 2) return [];
  const summary = isRecord(whole.properties) ? whole.properties : {};
  const instructions = segments
    .map((segment) => (isRecord(segment.properties) ? segment.properties.plainText : undefined))
    .filter((text): text is string => typeof text === 'string');
  const list = instructions.length > 0 ? `<ol>${instructions.map((text) => `<li>${escapeHtml(text)}</li>`).join('')}</ol>` : '';
  const legs = routeLegs(line, places);
  const indoor = legs.filter((leg) => leg.indoor);
  const endpoint = (which: 'start' | 'end', point: LatLon, place: Place, text: string | undefined): MapShape => ({
    name: `${query} ${which}`,
    layer,
    lat: point.lat,
    lon: point.lon,
    icon: isIndoor(place) ? 'building' : which === 'start' ? 'play' : 'flag-checkered',
    iconColor: which === 'start' ? START_COLOR : END_COLOR,
    popup: popupTable([
      [which, placeLabel(place)],
      ['indoor', isIndoor(place) ? 'yes' : undefined],
      ['instruction', text],
    ]),
  });
  return [
    {
      name: query,
      layer,
      line: line.map(latLon),
      color: ROUTE_COLOR,
      weight: 5,
      clickable: true,
      popup:
        popupTable([
          ['length', lengthText(summary.length)],
          ['duration', durationText(summary.duration)],
          ['segments', summary.segments],
          ['indoor legs', indoor.length || undefined],
        ]) + list,
    },
    ...indoor.map((leg, i) => ({
      name: `${query} indoor ${i + 1}`,
      layer,
      line: line.slice(leg.start, leg.end + 1).map(latLon),
      color: INDOOR_COLOR,
      weight: 6,
      dashArray: '4 8',
      clickable: true,
      popup: popupTable([
        ['indoor', `${placeLabel(places[leg.from])} → ${placeLabel(places[leg.to])}`],
        ['waypoints', `${leg.from + 1} → ${leg.to + 1}`],
      ]),
    })),
    endpoint('start', line[0], places[0], instructions[0]),
    endpoint('end', line[line.length - 1], places[places.length - 1], instructions[instructions.length - 1]),
  ];
}
