import { sendJson } from '../http';
import { Sandbox } from '../server';
import {
  Point,
  check,
  encode,
  inJapan,
  jobsOf,
  jsonObject,
  onlyMembers,
  requireEnum,
  requireEnumArray,
  requireLocationObject,
  requireNumber,
  requireObject,
  strictly,
} from '../routing';
import { TOO_MANY_JOBS } from '../job-clock';
import { townOf } from '../town/index';
import { AvoidFeature, isolines } from '../town/isoline';
import { Mode } from '../town/network';

/**
 * `POST /v1/routing/isoline` and `GET /v1/routing/isoline/jobs/:jobId` (endpoint names `isoline`
 * and `isoline-job`, permission `isoline`). The body is checked against the spec's table, unknown
 * members included. Choices where the spec is silent:
 * - `avoid` must hold exactly one member (any name), an array of the avoidable features;
 * - `range.value` is a number, or a non-empty array of numbers for several ranges;
 * - `shape` must be a whole number above 30 (and at most 10000, a sandbox limit); default 64;
 * - at most 10 origins and 10 ranges, and 200,000 points in all polygons (origins × ranges × shape);
 * - an asynchronous job takes 0.3 s plus 0.2 s per polygon (`job-clock.ts`);
 * - an origin in Japan is refused with 400 and `error: "region_not_supported"`;
 * - `isoline` is one Polygon Feature when one polygon results, else an array of them, one per
 *   origin and range (origin by origin, ranges in request order), each ring closed and exactly
 *   `shape` points long; `origin` is the geohash of the origin (an array for several origins);
 * - the polygons are the town's streets reached (sandbox/town/isoline.ts): one search from each origin
 *   per transport mode (what any of them reaches counts), `mode` `fast` at each street's speed, `short`
 *   at one speed for every street, streets with an avoided feature left out, at most 20 km from the
 *   origin; a concave hull of what is reached, whose detail `optimizeFor` sets (`quality` follows
 *   the streets closest, `performance` is convex), the larger ranges containing the smaller.
 */

const RANGE_TYPES = ['distance', 'time'] as const;
const MODES = ['short', 'fast'] as const;
const TRANSPORT_MODES = ['car', 'truck', 'pedestrian'] as const;
const AVOID = ['tollRoad', 'controlledAccessHighway', 'ferry', 'tunnel', 'dirtRoad'] as const;
const OPTIMIZE_FOR = ['quality', 'performance', 'balanced'] as const;
const DEFAULT_SHAPE = 64;
const MAX_SHAPE = 10_000;
/** Sandbox caps (docs/sandbox.md): origins and ranges per request, and points in all its polygons. */
export const ISOLINE_LIMITS = { origins: 10, ranges: 10, points: 200_000 } as const;

interface IsolineRequest {
  async: boolean;
  origins: Point[];
  range: { type: (typeof RANGE_TYPES)[number]; value: number | number[] };
  values: number[];
  mode: (typeof MODES)[number];
  transportMode: string[];
  avoid: AvoidFeature[];
  optimizeFor: (typeof OPTIMIZE_FOR)[number];
  shape: number;
}

export default function isolineEndpoints(sandbox: Sandbox): void {
  const jobs = jobsOf(sandbox, 'isoline');
  sandbox.route(
    'POST',
    '/v1/routing/isoline',
    { endpoint: 'isoline', auth: 'project', permission: 'isoline' },
    strictly((ctx) => {
      const body = jsonObject(ctx);
      if (!body) return;
      const request = validate(body);
      const inJapanAt = request.origins.findIndex(inJapan);
      if (inJapanAt >= 0) {
        return sendJson(ctx.res, 400, {
          error: 'region_not_supported',
          message: `isoline routing is not available in the Japan region (origin ${inJapanAt + 1})`,
        });
      }
      const result = isolineResult(request);
      if (!request.async) return sendJson(ctx.res, 200, result);
      const handle = jobs.create(result, request.origins.length * request.values.length);
      if (!handle) return sendJson(ctx.res, 429, TOO_MANY_JOBS(sandbox.options.maxRoutingJobs));
      sendJson(ctx.res, 200, handle);
    }),
  );
  sandbox.route('GET', '/v1/routing/isoline/jobs/:jobId', { endpoint: 'isoline-job', auth: 'project', permission: 'isoline' }, (ctx) => {
    const response = jobs.poll(ctx.params.jobId);
    if (response === undefined) return sendJson(ctx.res, 404, { error: 'not_found', message: 'no such isoline job' });
    sendJson(ctx.res, response.status, response.body);
  });
}

function validate(body: Record<string, unknown>): IsolineRequest {
  onlyMembers(body, ['async', 'origins', 'range', 'mode', 'transportMode', 'avoid', 'optimizeFor', 'shape'], 'body');
  check(typeof body.async === 'boolean', 'async is required and must be a boolean');
  check(Array.isArray(body.origins) && body.origins.length > 0, 'origins is required: a non-empty array of Location objects');
  check(body.origins.length <= ISOLINE_LIMITS.origins, `origins holds ${body.origins.length} points; the sandbox takes at most ${ISOLINE_LIMITS.origins}`);
  const origins = (body.origins as unknown[]).map((origin, i) => requireLocationObject(origin, `origins[${i}]`));
  const range = requireObject(body.range, 'range');
  onlyMembers(range, ['type', 'value'], 'range');
  const type = requireEnum(range.type, RANGE_TYPES, 'range.type');
  const values = Array.isArray(range.value) ? range.value : [range.value];
  check(values.length > 0, 'range.value must not be an empty array');
  check(values.length <= ISOLINE_LIMITS.ranges, `range.value holds ${values.length} ranges; the sandbox takes at most ${ISOLINE_LIMITS.ranges}`);
  values.forEach((value, i) => check(requireNumber(value, `range.value[${i}]`) > 0, 'range.value must be greater than 0'));
  const mode = body.mode === undefined ? 'fast' : requireEnum(body.mode, MODES, 'mode');
  const transportMode = body.transportMode === undefined ? ['car'] : requireEnumArray(body.transportMode, TRANSPORT_MODES, 'transportMode');
  let avoid: AvoidFeature[] = [];
  if (body.avoid !== undefined) {
    const avoidMember = requireObject(body.avoid, 'avoid');
    const members = Object.keys(avoidMember);
    check(members.length === 1, 'avoid must hold exactly one member: the array of features to avoid');
    avoid = requireEnumArray(avoidMember[members[0]], AVOID, `avoid.${members[0]}`);
  }
  const optimizeFor = body.optimizeFor === undefined ? 'balanced' : requireEnum(body.optimizeFor, OPTIMIZE_FOR, 'optimizeFor');
  let shape = DEFAULT_SHAPE;
  if (body.shape !== undefined) {
    shape = requireNumber(body.shape, 'shape');
    check(Number.isInteger(shape) && shape > 30, `shape must be a whole number greater than 30, got ${shape}`);
    check(shape <= MAX_SHAPE, `shape must be at most ${MAX_SHAPE} in the sandbox`);
  }
  const points = origins.length * values.length * shape;
  check(points <= ISOLINE_LIMITS.points, `origins × ranges × shape is ${points} points; the sandbox computes at most ${ISOLINE_LIMITS.points}`);
  return {
    async: body.async,
    origins,
    range: { type, value: range.value as number | number[] },
    values: values as number[],
    mode,
    transportMode,
    avoid,
    optimizeFor,
    shape,
  };
}

function isolineResult(request: IsolineRequest): Record<string, unknown> {
  const polygons = request.origins.flatMap((origin) =>
    isolines(townOf(), {
      origin: [origin.lon, origin.lat],
      values: request.values,
      type: request.range.type,
      mode: request.mode,
      transportModes: request.transportMode as Mode[],
      avoid: request.avoid,
      optimizeFor: request.optimizeFor,
      shape: request.shape,
    }).map((ring) => ({ type: 'Feature', geometry: { type: 'Polygon', coordinates: [ring] }, properties: {} })),
  );
  const originHashes = request.origins.map((origin) => encode(origin));
  return {
    origin: originHashes.length === 1 ? originHashes[0] : originHashes,
    range: request.range,
    mode: request.mode,
    transportMode: request.transportMode,
    isoline: polygons.length === 1 ? polygons[0] : polygons,
  };
}
