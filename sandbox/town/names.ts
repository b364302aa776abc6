import { hash32 } from './random';

/**
 * Street names from seeded word lists. Arterials take their names from a short list that holds the
 * streets every town has (Main Street, High Street, Station Road, Market Square, Church Lane), spread
 * so that neighbouring arterials differ and every name occurs within a few kilometres of any point.
 */

const ARTERIAL_NAMES = [
  'Main Street',
  'High Street',
  'Station Road',
  'Market Square',
  'Church Lane',
  'King Street',
  'Bridge Road',
  'Park Avenue',
  "Queen's Walk",
  'Mill Road',
  'London Road',
  'Castle Street',
];

const PREFIXES = [
  'Harbour',
  'Elm',
  'Oak',
  'Ash',
  'Birch',
  'Cedar',
  'Maple',
  'Willow',
  'Rose',
  'Garden',
  'Orchard',
  'Meadow',
  'Spring',
  'Chapel',
  'School',
  'Victoria',
  'Albert',
  'Windmill',
  'Forge',
  'Granary',
  'Brook',
  'Hill',
  'Field',
  'Green',
  'Lime',
  'Hazel',
  'Poplar',
  'Beech',
  'Fern',
  'Heather',
  'Juniper',
  'Linden',
  "St Mary's",
  "Miller's",
  "Bishop's",
];
const SUFFIXES = ['Street', 'Road', 'Lane', 'Avenue', 'Way', 'Close', 'Grove', 'Crescent'];

export function arterialName(seed: number, eastWest: boolean, line: number, segment: number): string {
  const shift = hash32(seed, 7) % ARTERIAL_NAMES.length;
  const n = ARTERIAL_NAMES.length;
  return ARTERIAL_NAMES[(((line * 5 + segment * 7 + (eastWest ? 0 : 6) + shift) % n) + n) % n];
}

export function motorwayName(seed: number, eastWest: boolean, line: number): string {
  return `${eastWest ? 'A' : 'M'}${10 + (hash32(seed, 8, eastWest ? 1 : 2, line) % 90)}`;
}

export function residentialName(seed: number, eastWest: boolean, line: number, segment: number): string {
  const h = hash32(seed, 9, eastWest ? 1 : 2, line, segment);
  return `${PREFIXES[h % PREFIXES.length]} ${SUFFIXES[(h >>> 8) % SUFFIXES.length]}`;
}
