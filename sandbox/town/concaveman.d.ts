/** concaveman 1 ships no types: a closed ring around the points, simpler for a higher concavity. */
declare module 'concaveman' {
  export default function concaveman(points: Array<[number, number]>, concavity?: number, lengthThreshold?: number): Array<[number, number]>;
}
